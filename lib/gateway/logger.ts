// The logging surface the gateway uses; a pino logger satisfies it.
export interface GatewayLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: GatewayLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};
