import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layer rules of ARCHITECTURE.md, one entry per folder: what a file there must not import. Every file gets one
// list (ESLint does not merge a rule's options across config entries), so each layer's list is built whole here.

/** No file anywhere reaches into a Temporal SDK package's internals. */
const noSdkInternals = {
  group: ['@temporalio/*/lib', '@temporalio/*/lib/*'],
  message: 'SDK internals change without notice: use the package entry point (@temporalio/<package>)',
};

/** Outside workflows/, only the workflows' public contract: definitions.ts, and the workflow functions' types. */
const workflowsContractOnly = [
  {
    regex: '^(\\.{1,2}/)+(src/)?workflows/(?!definitions$)',
    message: 'outside workflows/, import only workflows/definitions (the contract) or domain/',
  },
  {
    regex: '^(\\.{1,2}/)+(src/)?workflows$',
    allowTypeImports: true,
    message: 'the workflow functions are imported for their types only (typed starts): use `import type`',
  },
];

const onlyEntryPointsLaunchLocally = {
  regex: '^(\\.{1,2}/)+local/',
  message: 'local/ launchers are for npm start, scripts and tests, not for the product code',
};

const notTheInterfaces = {
  regex: '^(\\.{1,2}/)+(http|cli)/',
  message: 'nothing below the HTTP API and the CLI imports them',
};

/** Each layer: its files, and what they must not import besides the rules every src file shares. */
const LAYERS = [
  {
    files: ['src/domain/**/*.ts'],
    own: [
      {
        regex: '^(?!\\./|zod$)',
        message: 'domain/ is the shared vocabulary: it imports only domain/ and zod (no project code, no Node modules)',
      },
    ],
    contract: false,
  },
  {
    files: ['src/workflows/**/*.ts'],
    own: [
      {
        regex: '^(?!\\./|\\.\\./domain/|\\.\\./activities/|@temporalio/(workflow|common)$)',
        message: 'workflows import only @temporalio/workflow, @temporalio/common, domain/ and their own folder',
      },
      {
        group: ['../activities/*'],
        allowTypeImports: true,
        message: 'workflows know activities by their types only (proxyActivities): use `import type`',
      },
    ],
    contract: false,
  },
  {
    files: ['src/sandbox/**/*.ts'],
    own: [
      {
        regex: '^\\.\\./(?!domain/)',
        message:
          'the sandbox stands apart from the code it fakes (never provider/): it imports only domain/ and @payments/client (as a merchant would)',
      },
    ],
  },
  {
    // Bundled with the domain/ code it uses into a package merchant services install (packages/client/build-client.ts).
    files: ['packages/client/src/**/*.ts'],
    own: [
      {
        regex: '^\\.\\./(?!\\.\\./\\.\\./src/domain/)',
        message:
          'the client package ships to merchant services: it imports only src/domain/, its own folder and npm packages',
      },
      {
        regex: '^(?!\\.|zod$|node:)',
        message: 'the client package depends on zod alone (and Node.js): a merchant service installs nothing else',
      },
    ],
  },
  {
    files: ['packages/client/*.ts'],
    own: [],
    local: true,
    interfaces: true,
  },
  {
    files: ['src/provider/**/*.ts', 'src/vault/**/*.ts', 'src/crypto/**/*.ts', 'src/banks/**/*.ts'],
    own: [
      {
        regex: '^\\.\\./(?!domain/|crypto/)',
        message: 'provider/, vault/, crypto/ and banks/ build on domain/ and crypto/ only',
      },
    ],
  },
  {
    files: ['src/http/**/*.ts', 'src/cli/**/*.ts'],
    ignores: ['src/cli/ops-context.ts'],
    own: [
      {
        group: ['../temporal/*', '@temporalio/client', '@temporalio/worker', '@temporalio/activity'],
        message: 'the HTTP API and the CLI go through the application layer (payments/), not Temporal directly',
      },
    ],
    interfaces: true,
  },
  {
    // Bundled into every workflow: it runs in the workflow sandbox, like workflows/.
    files: ['src/telemetry/workflow-interceptors.ts'],
    own: [
      {
        regex: '^(?!@temporalio/(workflow|interceptors-opentelemetry)$|@opentelemetry/api$)',
        message:
          'the workflow interceptors run in the workflow sandbox: only @temporalio/workflow, ' +
          '@temporalio/interceptors-opentelemetry and @opentelemetry/api',
      },
    ],
  },
  {
    files: ['src/telemetry/**/*.ts'],
    ignores: ['src/telemetry/workflow-interceptors.ts'],
    own: [
      {
        regex: '^\\.\\./(?!domain/|crypto/)',
        message: 'telemetry/ builds on domain/ and crypto/ only; the layers it traces take it from there',
      },
    ],
  },
  {
    files: [
      'src/payments/**/*.ts',
      'src/temporal/**/*.ts',
      'src/activities/**/*.ts',
      'src/metrics/**/*.ts',
      'src/config/**/*.ts',
      'src/records/**/*.ts',
    ],
    own: [],
  },
  {
    files: ['src/local/**/*.ts'],
    own: [],
    local: true,
  },
  {
    // Composition roots: the process entry points and the CLI's context wire the layers together.
    files: ['src/*.ts', 'src/cli/ops-context.ts'],
    own: [],
    local: true,
    interfaces: true,
  },
  {
    files: ['scripts/**/*.ts'],
    own: [{ group: ['../test/*', '../test/**'], message: 'scripts share launchers through src/local/, not test/' }],
    local: true,
    interfaces: true,
  },
  {
    files: ['test/**/*.ts'],
    own: [],
    contract: false,
    local: true,
    interfaces: true,
  },
];

function layerRules() {
  return LAYERS.map(({ files, ignores, own, contract = true, local = false, interfaces = false }) => ({
    files,
    ...(ignores ? { ignores } : {}),
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            noSdkInternals,
            ...own,
            ...(contract ? workflowsContractOnly : []),
            ...(local ? [] : [onlyEntryPointsLaunchLocally]),
            ...(interfaces ? [] : [notTheInterfaces]),
          ],
        },
      ],
    },
  }));
}

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'dist/',
      'packages/*/dist/',
      '.tools/',
      '.data/',
      '.tmp/',
      'test-artifacts/',
      'scripts/*.mjs',
      'eslint.config.mjs',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite', 'before', 'after'] },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  ...layerRules(),
);
