package reflector

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/kinformer/kinformer/cache/internal/shard"
)

// How a Reflector found out that the API server ignored its shard selector
// (ShardIgnoredError.Request).
const (
	// ShardSeenByList: a LIST answer without the selector echoed in its
	// shardInfo (or another one), or holding an object outside the shard.
	ShardSeenByList = "list"
	// ShardSeenByStreamingList: a streaming list delivered an object
	// outside the shard (streaming lists carry no shardInfo).
	ShardSeenByStreamingList = "streaming list"
	// ShardSeenByWatch: a watch delivered an object outside the shard.
	ShardSeenByWatch = "watch"
)

// ShardIgnoredError says that the API server answered a request without
// applying its shard selector (the ShardedListAndWatch feature gate is off,
// or the server predates it): the whole collection crossed the wire, and the
// Reflector kept only the shard. Its message names the selector and how it
// was found out, never an object. The package that wraps the engine maps it
// to its public type before a user sees it.
type ShardIgnoredError struct {
	// Selector is the shard selector sent.
	Selector string
	// Request is one of the ShardSeenBy... values.
	Request string
	// ShardInfo is the selector a LIST answer echoed when it echoed
	// another one; "" otherwise.
	ShardInfo string
}

// Error implements error.
func (e *ShardIgnoredError) Error() string {
	var how string
	switch {
	case e.Request == ShardSeenByList && e.ShardInfo != "":
		how = fmt.Sprintf("a LIST answer echoed another selector (%q)", e.ShardInfo)
	case e.Request == ShardSeenByList:
		how = "a LIST answer without shardInfo, or with objects outside the shard"
	default:
		how = "a " + e.Request + " delivered objects outside the shard"
	}
	return fmt.Sprintf("the API server ignored the shard selector %q (%s): the whole collection is sent and filtered on the client (degraded)", e.Selector, how)
}

// shardRequest adds the Reflector's shard selector, if any, to the options
// of a LIST or watch request.
func (e *Engine) shardRequest(options *metav1.ListOptions) {
	if f := e.settings.Shard; f != nil {
		options.ShardSelector = f.Selector()
	}
}

// listShardIgnored returns the ShardIgnoredError of a LIST answer whose
// shardInfo does not echo the selector sent, or nil when it does (or the
// Reflector has no shard).
func (e *Engine) listShardIgnored(list kruntime.Object) *ShardIgnoredError {
	f := e.settings.Shard
	if f == nil {
		return nil
	}
	echoed, ok := shard.ListSelector(list)
	if ok && echoed == f.Selector() {
		return nil
	}
	return &ShardIgnoredError{Selector: f.Selector(), Request: ShardSeenByList, ShardInfo: echoed}
}

// inShard reports whether a listed object belongs to the Reflector's shard
// (always, without one). An object without metadata is let through: the
// store logs and counts it as the bad data it is.
func (e *Engine) inShard(obj interface{}) bool {
	f := e.settings.Shard
	if f == nil {
		return true
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return true
	}
	return f.Contains(m)
}

// shardIgnored reports, once per cycle, that the server ignored the shard
// selector: counted in the diagnostics at now and passed to Options.Report.
func (d *driver) shardIgnored(err *ShardIgnoredError, now time.Time) {
	if d.shardReported || err == nil {
		return
	}
	d.shardReported = true
	d.e.stats.ShardIgnored(now)
	d.e.loggerFor(d.ctx).V(2).Info("Warning: the API server ignored the shard selector; filtering on the client",
		"reflector", d.e.name, "type", d.e.typeDescription, "selector", err.Selector, "request", err.Request)
	if d.e.report != nil {
		d.e.report(d.ctx, err)
	}
}

// shardListReport returns the callback listPages reports with.
func (d *driver) shardListReport() func(*ShardIgnoredError) {
	if d.e.settings.Shard == nil {
		return nil
	}
	return func(err *ShardIgnoredError) { d.shardIgnored(err, d.e.clock.Now()) }
}

// eventInShard reports whether an accepted event of the open stream or
// watch belongs to the shard; one that does not is reported as the server
// ignoring the selector. Bookmarks always belong.
func (d *driver) eventInShard(objMeta metav1.Object, bookmark bool, now time.Time) bool {
	f := d.e.settings.Shard
	if f == nil || bookmark || f.Contains(objMeta) {
		return true
	}
	request := ShardSeenByWatch
	if d.streaming {
		request = ShardSeenByStreamingList
	}
	d.shardIgnored(&ShardIgnoredError{Selector: f.Selector(), Request: request}, now)
	return false
}
