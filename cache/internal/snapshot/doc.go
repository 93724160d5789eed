// Package snapshot is the engine of informer snapshots: the file an informer
// writes its cache to when it stops and resumes from when it starts, so that
// a restart watches from where the last run left off instead of listing.
//
// It knows the file format (format.go), its encryption (crypt.go), who may
// have written a file (perm.go), which objects are sensitive (sensitive.go)
// and how a scope is written and shown (scope.go). It does not know
// informers: package cache decides when to read and write, turns its
// options into a File, and wraps the errors returned here in its public
// SnapshotError. This package imports no other package of kinformer.
//
// # Contract
//
// A File is tied to an identity (the Go type of the informer's objects, the
// group/version/kind of unstructured ones, its description), a Tie (the
// informer's scope and projection) and a Codec. File.Write writes the
// objects it is given, in their order, with the resourceVersion they are
// the state at; File.Read returns exactly those objects and that version,
// or an error. The caller hands Write one consistent state of its cache;
// this package cannot tell.
//
// # Invariants
//
//   - A file is replaced whole: it is written to a temporary file in the
//     same directory, synced and renamed, so a reader sees the old content
//     or the new, never a mix, and a failed write leaves no temporary file.
//   - Read returns a file's content only when everything checks: the magic
//     and format version, the CRC-32C of the whole file, every record
//     length (bounded, so a corrupt length cannot make it allocate without
//     limit), the identity, the tie, the codec, a non-empty
//     resourceVersion and the object count. Anything else is an error, and
//     no object is returned.
//   - A file read with a key is read only when it is encrypted and every
//     chunk authenticates with that key (AES-256-GCM under a key derived
//     per file from the key and a random salt; the nonce numbers the chunk
//     and marks the last one), so a file cut, reordered, assembled from
//     others, written with another key or changed in one bit is refused. A
//     plain file read with a key is refused with ErrNotEncrypted, and an
//     encrypted file read without one is refused.
//   - Where permission bits apply (ModesApply), directories are created
//     0700 and files 0600, and a directory its group or others may write
//     to, a file that is not the process user's own or not owner-only, and
//     a symbolic link are refused, on read and on write. The file's checks
//     are made on the opened file, so it cannot be swapped between check
//     and read.
//
// Whether objects may be written in clear is the caller's decision; Sensitive
// and SensitiveResource say which objects are sensitive (core Secrets,
// typed, unstructured or as metadata, and whatever the informer marks).
package snapshot
