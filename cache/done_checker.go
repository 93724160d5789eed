package cache

// DoneChecker describes an activity that finishes once, such as an informer's
// initial sync, so that callers can wait for it without polling. Unlike
// InformerSynced it also names what is being waited for. WaitFor waits on
// DoneCheckers; IsDone checks one without blocking.
type DoneChecker interface {
	// Name describes what is being waited for. It may be computed on each
	// call, so call it off hot paths (for example only to log a timeout).
	Name() string

	// Done returns a channel that is closed when the activity has finished.
	Done() <-chan struct{}
}

// IsDone reports, without blocking, whether checker's activity has finished.
// A nil checker is never done.
func IsDone(checker DoneChecker) bool {
	if checker == nil {
		return false
	}
	select {
	case <-checker.Done():
		return true
	default:
		return false
	}
}
