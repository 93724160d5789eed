package cache

// handleDeltas is the controller's Process function: the popped deltas
// are applied (the informer's applier, cache/internal/apply), then the
// notifications they made are handed to the handlers.
func (s *sharedIndexInformer) handleDeltas(obj interface{}, isInInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	err := s.applier.Process(obj, isInInitialList)
	if d, ok := obj.(Deltas); ok {
		s.noteRelistPiecesLocked(d)
		s.stats.CountDeltas(s.applier.Applied(d))
	} else {
		s.stats.CountDeltas(s.applier.Applied(nil) + 1)
	}
	s.notes.Flush(s.processor)
	return err
}

// handleBatch is the controller's ProcessBatch function: handleDeltas for
// a batch.
func (s *sharedIndexInformer) handleBatch(deltas []Delta, isInInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	err := s.applier.ProcessBatch(deltas, isInInitialList)
	s.noteRelistPiecesLocked(deltas)
	s.stats.CountDeltas(s.applier.Applied(deltas))
	s.notes.Flush(s.processor)
	return err
}
