// Package layering has no code: its test holds the module to the direction of its imports
// (docs/architecture.md, "Layers"), so a package that reaches a layer it must not know
// fails the build's tests rather than a review.
package layering
