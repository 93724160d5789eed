// Package gvrfactory is the factory the dynamic and metadata informer
// packages share: informers keyed by group/version/resource, over the
// factory engine (package factoryengine). The two packages differ only in
// their client and the objects it returns, which each describes with a
// Client; their factory types embed a *Factory, and their With... options
// set fields of its Options before Init.
//
// Contract: New, then the options, then Init once, then any other method
// (all safe for concurrent use from then on). Every informer it builds gets
// the namespace index, the factory's resync period, and the settings
// factoryengine.Options.InformerOptions derives for its resource (list
// admission, relist mode, liveness, staleness probe, Retry-After, snapshot
// file tied to the factory's scope and cluster); then its projection, if
// any, and the factory's transform. Core secrets are always sensitive
// (cache.IsSensitiveResource), since their objects' type does not say so.
//
// It imports the informers package (for GenericInformer) and the engine,
// never the dynamic or metadata packages.
package gvrfactory
