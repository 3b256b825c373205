// One monotonic clock for every worker of an instance, in milliseconds: each worker's
// performance.now() counts from its own start, but timeOrigin + now() is the same instant
// everywhere (a pexe's threads compare times taken on different threads).

export function now() {
  return performance.timeOrigin + performance.now();
}
