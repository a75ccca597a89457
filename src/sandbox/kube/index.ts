// The sandbox Kubernetes API server's public surface.
export { startKubeApiServer } from './server.ts';
export type { KubeApiServer, KubeApiServerOptions, RequestLogEntry } from './server.ts';
export { ObjectStore } from './store.ts';
export type { Subscriber } from './store.ts';
export type { ListOptions, ListPage } from './list-page.ts';
export type { EvictionHook } from './eviction.ts';
export type { KubeFaults } from './faults.ts';
export { drainerCrds } from './crds.ts';
export { StatusError, isStatusError } from './types.ts';
export type { KubeObject, ObjectMeta, Status, StatusCause, DeleteOptions, WatchEventType } from './types.ts';
export * as kubeStatus from './status.ts';
