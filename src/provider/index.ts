export { createProviderClient } from './client';
export type { InitiationRequest, ProviderClient, ProviderClientOptions, ProviderConfig } from './client';
export { providerState } from './codes';
export { parseCallback } from './callback';
export { classifyError, classifyResponse, classifyStatus, classifyTransportError, ProviderError } from './errors';
export type { ErrorClassification, ProviderErrorDetails } from './errors';
export { encodeInitiation, formatAmount, parseAck, providerReference } from './wire';
export type { WireRequest } from './wire';
export type { StatusQuery } from './status';
