public import Dispatch

/// Where a ``TripService`` runs subscriber callbacks.
///
/// Whatever the executor, the callbacks of one model run one at a time and in order: each
/// model queues its events and drains the queue from one job at a time on the executor, so
/// even a concurrent queue never runs two callbacks of one model at once (callbacks of
/// different models may then run in parallel). The default, ``serviceQueue``, is one serial
/// queue per service, so no two callbacks of a service ever overlap.
public struct CallbackExecutor: Sendable {
  enum Kind: Sendable {
    case serviceQueue
    case dispatchQueue(DispatchQueue)
    case taskExecutor(any TaskExecutor)
  }

  let kind: Kind

  /// A serial `DispatchQueue` the service creates and owns. The default.
  public static var serviceQueue: CallbackExecutor { CallbackExecutor(kind: .serviceQueue) }

  /// Your `DispatchQueue`; serial or concurrent (see above).
  public static func dispatchQueue(_ queue: DispatchQueue) -> CallbackExecutor {
    CallbackExecutor(kind: .dispatchQueue(queue))
  }

  /// A Swift `TaskExecutor`: callbacks run in tasks that prefer it.
  public static func taskExecutor(_ executor: any TaskExecutor) -> CallbackExecutor {
    CallbackExecutor(kind: .taskExecutor(executor))
  }

  /// A function that runs a job on this executor; `serviceQueue` becomes `queue`.
  func scheduler(serviceQueue queue: DispatchQueue)
    -> @Sendable (
      @escaping @Sendable () -> Void
    ) -> Void
  {
    switch kind {
    case .serviceQueue:
      return { job in queue.async(execute: job) }
    case .dispatchQueue(let queue):
      return { job in queue.async(execute: job) }
    case .taskExecutor(let executor):
      return { job in Task(executorPreference: executor) { job() } }
    }
  }
}
