package images

import (
	"fmt"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/codec/ir"
)

// Options are what an image model makes, as its catalog entry says (catalog.Model.Images):
// the codec's own type, so the catalog, not the codec, knows the file.
type Options struct {
	// Sizes are the WIDTHxHEIGHT the model makes; the first is what auto means. None: any
	// size of at most MaxSide a side, made at the closest aspect ratio of the gateway's Sizes.
	Sizes []string
	// Qualities and Styles are the values the model takes for quality and style. None: the
	// model has no such setting (quality auto, the provider's default, is always taken).
	Qualities []string
	Styles    []string
}

// MaxSide bounds each side of a size asked of a model without sizes of its own (the images
// API's own bound).
const MaxSide = 4096

// For checks the request against what the model makes — each refusal a 400 naming the member,
// before anything is reserved or called — and sets the size the upstream is asked for.
func (r *Request) For(o Options) *ir.Error {
	size, e := o.size(r.Size)
	if e != nil {
		return e
	}
	if r.Quality != "" && r.Quality != "auto" {
		if e := offered("quality", r.Quality, o.Qualities); e != nil {
			return e
		}
	}
	if r.Style != "" {
		if e := offered("style", r.Style, o.Styles); e != nil {
			return e
		}
	}
	r.Size = size
	return nil
}

// size is what asked ("" for auto) is made at.
func (o Options) size(asked string) (string, *ir.Error) {
	switch {
	case asked == "" && len(o.Sizes) > 0:
		return o.Sizes[0], nil
	case asked == "":
		return DefaultSize, nil
	case len(o.Sizes) > 0:
		if i := slices.IndexFunc(o.Sizes, func(s string) bool { return strings.EqualFold(s, asked) }); i >= 0 {
			return o.Sizes[i], nil
		}
		return "", bad("size", "size %q is not offered by this model: use one of %s, or auto", asked, strings.Join(o.Sizes, ", "))
	}
	w, h, _ := parseSize(asked) // DecodeRequest read it
	if w > MaxSide || h > MaxSide {
		return "", bad("size", "size %q is too large: each side is at most %d", asked, MaxSide)
	}
	return closestSize(Sizes, w, h), nil
}

// offered checks value against what the model takes for member.
func offered(member, value string, takes []string) *ir.Error {
	if len(takes) == 0 {
		return bad(member, "%s %q is not offered: this model takes no %s setting; leave %s out", member, value, member, member)
	}
	if !slices.Contains(takes, value) {
		return bad(member, "%s %q is not offered by this model: use one of %s", member, value, strings.Join(takes, ", "))
	}
	return nil
}

// Check says what is wrong with options an operator wrote, and in which list ("" when
// nothing is): each size a WIDTHxHEIGHT, no value empty or listed twice.
func (o Options) Check() (list, problem string) {
	for _, s := range o.Sizes {
		if _, _, ok := parseSize(s); !ok {
			return "sizes", fmt.Sprintf("%q must be WIDTHxHEIGHT, for example 1024x1024", s)
		}
	}
	for _, l := range []struct {
		name   string
		values []string
	}{{"sizes", o.Sizes}, {"qualities", o.Qualities}, {"styles", o.Styles}} {
		for i, v := range l.values {
			if v == "" {
				return l.name, "an empty value"
			}
			if slices.Contains(l.values[:i], v) {
				return l.name, fmt.Sprintf("%q is listed twice", v)
			}
		}
	}
	return "", ""
}
