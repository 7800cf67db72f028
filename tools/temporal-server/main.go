// Command temporal-server is Temporal's server (go.temporal.io/server, the version go.mod pins) with one addition:
// the `worker` authorizer (authorizer.go): only a worker's token takes and answers tasks, and only an admin's resets
// or terminates. Its command line is the part of Temporal's own the project uses: `[--config-file <file>]
// [--allow-no-auth] start [--service <name>…]` and `--version`; without a file it renders Temporal's embedded
// template from the environment, as the temporalio/server image does (docker-compose.yml builds it on that image:
// Dockerfile). Set-up builds it (scripts/setup.mjs); docs/security.md says why.
package main

import (
	"fmt"
	"os"
	_ "time/tzdata" // embed tzdata as a fallback

	"github.com/urfave/cli/v2"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/headers"
	"go.temporal.io/server/common/log"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql" // the cluster's stores
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"     // Temporal's embedded default
	"go.temporal.io/server/temporal"
)

// workerAuthorizerName is the value of `global.authorization.authorizer` that selects workerAuthorizer.
const workerAuthorizerName = "worker"

func main() {
	app := &cli.App{
		Name:    "temporal-server",
		Usage:   "Temporal's server with the payments project's worker authorizer",
		Version: headers.ServerVersion,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "allow-no-auth", Usage: "run without an authorizer when the configuration names none", EnvVars: []string{config.EnvKeyAllowNoAuth}},
			&cli.StringFlag{Name: "config-file", Usage: "the server's configuration file (default: the embedded template)", EnvVars: []string{config.EnvKeyConfigFile}},
		},
		Commands: []*cli.Command{{
			Name:  "start",
			Usage: "start the server",
			Flags: []cli.Flag{
				&cli.StringSliceFlag{Name: "service", Value: cli.NewStringSlice(temporal.DefaultServices...), Usage: "service(s) to start", EnvVars: []string{"TEMPORAL_SERVICES"}},
			},
			Action: start,
		}},
	}
	if err := app.Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func start(c *cli.Context) error {
	source := config.WithEmbedded()
	if file := c.String("config-file"); file != "" {
		source = config.WithConfigFile(file)
	}
	cfg, err := config.Load(source)
	if err != nil {
		return fmt.Errorf("unable to load the configuration: %w", err)
	}
	logger := log.NewZapLogger(log.BuildZapLogger(cfg.Log))
	authorizer, err := authorizerFor(&cfg.Global.Authorization)
	if err != nil {
		return err
	}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&cfg.Global.Authorization, logger)
	if err != nil {
		return fmt.Errorf("unable to build the claim mapper: %w", err)
	}
	audienceMapper, err := authorization.GetAudienceMapperFromConfig(&cfg.Global.Authorization)
	if err != nil {
		return fmt.Errorf("unable to build the audience mapper: %w", err)
	}
	server, err := temporal.NewServer(
		temporal.ForServices(c.StringSlice("service")),
		temporal.WithConfig(cfg),
		temporal.WithLogger(logger),
		temporal.InterruptOn(temporal.InterruptCh()),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithAudienceGetter(func(*config.Config) authorization.JWTAudienceMapper { return audienceMapper }),
	)
	if err != nil {
		return fmt.Errorf("unable to create the server: %w", err)
	}
	return server.Start()
}

func authorizerFor(cfg *config.Authorization) (authorization.Authorizer, error) {
	if cfg.Authorizer == workerAuthorizerName {
		return newWorkerAuthorizer(), nil
	}
	authorizer, err := authorization.GetAuthorizerFromConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("unable to build the authorizer: %w", err)
	}
	return authorizer, nil
}
