export type { BaseImageImport, BaseImageInfo, BaseImageProgress, BaseImageRecipe, BaseImageStore } from './base-images.ts';
export type { ProviderCapabilities, SetupConnectionType, TemplateKind } from './capabilities.ts';
export { ON_HOST_PROVIDER_CAPABILITIES, SETUP_CONNECTION_TYPES, TEMPLATE_KINDS } from './capabilities.ts';
export type { ConnectedProviderFactory, ConnectionTest, ProviderConnection } from './connections.ts';
export type { ProviderErrorCode } from './errors.ts';
export { isProviderError, PROVIDER_ERROR_CODES, ProviderError } from './errors.ts';
export type { CollectedExec, ExecChunk, ExecExit, ExecProcess, ExecSource, ExecStreamName } from './exec-output.ts';
export { collectExecOutput, DEFAULT_EXEC_OUTPUT_MAX_BYTES, ExecOutput, utf8Boundary } from './exec-output.ts';
export { resolveDirInsideRoot } from './host-path.ts';
export { PidLineFilter, pidLineCommand, pidLinePrologue } from './pid-line.ts';
export type {
  Availability,
  CapturedTemplate,
  CaptureRequest,
  ChangeKind,
  CreatedSandbox,
  CreateSandboxRequest,
  Disposable,
  ExecRequest,
  ExecResult,
  FileChange,
  ForkTarget,
  InstanceInfo,
  InstanceStatus,
  ManagedInstance,
  ProviderConfig,
  ProviderContext,
  PtyOptions,
  PtyStream,
  SandboxProvider,
  SetupConnection,
  SetupLease,
  StartSetupRequest,
  TemplateRef,
  WriteFileOptions,
} from './provider.ts';
export { secret, secretPathsOf } from './secret.ts';
export { staticBinary } from './static-binary.ts';
