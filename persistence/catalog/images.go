package catalog

import (
	"fmt"

	"github.com/modelgate/modelgate/codec/images"
)

// imageDoc is what an image model makes: the values a request's size, quality and style may
// take (docs/catalog.md, "Image models"). None listed keeps the gateway's defaults.
type imageDoc struct {
	Sizes     []string `yaml:"sizes,omitempty"`
	Qualities []string `yaml:"qualities,omitempty"`
	Styles    []string `yaml:"styles,omitempty"`
}

// images reads an image model's sizes, qualities and styles; another kind lists none.
func (v *validator) images(m *Model, d *modelDoc) {
	o := images.Options{Sizes: d.Sizes, Qualities: d.Qualities, Styles: d.Styles}
	if m.Kind != KindImage {
		for _, f := range []struct {
			field string
			set   bool
		}{{"sizes", len(o.Sizes) > 0}, {"qualities", len(o.Qualities) > 0}, {"styles", len(o.Styles) > 0}} {
			if f.set {
				v.fail(m.ID, f.field, fmt.Sprintf("only image models list %s (this one is %s)", f.field, m.Kind))
			}
		}
		return
	}
	if list, problem := o.Check(); list != "" {
		v.fail(m.ID, list, problem)
	}
	m.Images = o
}
