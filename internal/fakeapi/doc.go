// Package fakeapi is a scriptable stand-in for one resource of the Kubernetes API, for tests of
// Reflectors, informers and the engines behind them. An API value has client-go's ListerWatcher
// method set (List, Watch, ListWithContext, WatchWithContext), so it is passed wherever a
// ListerWatcher is taken.
//
// A test writes a script before or while the code under test runs: the answers to the next
// List calls (a list object, one page of a paged list, or an error) and to the next Watch calls
// (an error, or a watch that delivers events and then closes or stays open). Each call takes the
// next answer of its kind, in order, and records the options it was called with. A call beyond
// the script marks the script exhausted (Exhausted is closed once) and then gets a harmless
// answer: List fails with ErrScriptExhausted, Watch returns an open watch with no events, so the
// code under test waits instead of spinning.
//
// A BeforeList (BeforeWatch) function sees each List (Watch) call, with its context, as it is
// made: it can hold the call (a Gate holds calls until the test releases them, one at a time
// or all at once) or answer it with an error instead of its scripted answer.
//
// Watches stay reachable after they were handed out (Watches, Watch.Send, Watch.Close), so a
// test can deliver events at the moment it chooses and can check that the code under test
// stopped a watch. Everything is safe for concurrent use.
//
// Server is the other half: an in-memory server for the pods of one namespace, with state. A
// test changes it (Create, Update, Delete, their Missed variants that no watch hears, Expire)
// and the server answers LIST (sorted, paged from one snapshot), WATCH (replay after the asked
// version, 410 Gone below the compacted one) and streaming lists as the real one does, and
// records each request. A test can also cut its pages smaller than asked (PageSize), hold or
// fail a LIST as it is made (BeforeList, with a Gate) and answer in another list type
// (AnswerListsAs). Use API where the test dictates every answer, Server where it plays a
// cluster.
//
// The package is for tests only (of cache, its engines and the factories); it imports no
// kinformer package.
package fakeapi
