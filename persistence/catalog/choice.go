package catalog

import "slices"

// What a request's choice of model asks of the catalog (the choice itself is in transport/api).

// Candidates are an auto model's candidate models, in the file's order; nil for a model
// that is not an auto model.
func (c *Catalog) Candidates(m *Model) []*Model {
	if m.Auto == nil {
		return nil
	}
	return c.modelsNamed(m.Auto.Candidates)
}

// FallbacksOf are the models m falls back to, in the file's order.
func (c *Catalog) FallbacksOf(m *Model) []*Model { return c.modelsNamed(m.Fallbacks) }

// modelsNamed resolves ids the loader checked, so each is in the catalog.
func (c *Catalog) modelsNamed(ids []string) []*Model {
	if len(ids) == 0 {
		return nil
	}
	out := make([]*Model, len(ids))
	for i, id := range ids {
		out[i] = c.byName[id]
	}
	return out
}

// AcceptsImages reports whether the model takes images in its input
// (architecture.input_modalities lists "image").
func (m *Model) AcceptsImages() bool {
	return slices.Contains(m.Architecture.InputModalities, "image")
}
