package catalog

import (
	"fmt"
)

// removedDoc is one entry of the file's removed: list.
type removedDoc struct {
	ID          string `yaml:"id"`
	Replacement string `yaml:"replacement"`
}

// removed records the models taken out of the catalog, so a client calling one hears what
// to use instead (docs/decisions.md, "Removed models"). A removed id may not also be served, and
// a replacement must be a model the catalog serves.
func (v *validator) removed(c *Catalog, list []removedDoc) {
	for i, d := range list {
		where := fmt.Sprintf("removed[%d]", i)
		switch {
		case !idPattern.MatchString(d.ID):
			v.fail("", where+".id", fmt.Sprintf("%q must be 1-128 letters, digits or ._:/@-", d.ID))
			continue
		case c.byName[d.ID] != nil:
			v.fail("", where+".id", fmt.Sprintf("%q is still a model or alias of the catalog; remove it from models first", d.ID))
		}
		if _, dup := c.removed[d.ID]; dup {
			v.fail("", where+".id", fmt.Sprintf("%q is listed twice", d.ID))
		}
		if d.Replacement != "" && c.byName[d.Replacement] == nil {
			v.fail("", where+".replacement", fmt.Sprintf("model %q is not in the catalog", d.Replacement))
		}
		c.removed[d.ID] = d.Replacement
	}
}
