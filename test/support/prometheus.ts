import { request } from 'undici';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Scrapes a Prometheus endpoint into its samples. */
export async function scrape(url: string): Promise<Sample[]> {
  return parseExposition(await scrapeText(url));
}

/** Scrapes a Prometheus endpoint into its metric families: name → type (`counter`, `gauge`, `histogram`…). */
export async function scrapeTypes(url: string): Promise<Map<string, string>> {
  const types = new Map<string, string>();
  for (const [, name, type] of (await scrapeText(url)).matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    if (name && type) types.set(name, type);
  }
  return types;
}

async function scrapeText(url: string): Promise<string> {
  const response = await request(url);
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}: ${text}`);
  return text;
}

/** Parses the Prometheus text format (the parts our endpoints use: no escaped quotes in label values). */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match?.[1] || match[3] === undefined) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)) {
      if (key !== undefined && value !== undefined) labels[key] = value;
    }
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples of one name whose labels include the given ones. */
export function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}
