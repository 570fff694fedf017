/*
 * jobs_find.c - finding things by name in the scheduling core: GPU
 * models and classes (few: a scan), nodes (many: util/hash.h's gf_hmap
 * over their names); jobs are found in the job table (table.c).
 *
 * Invariants: names indexes nodes 0..name_n-1 by name; names are
 * unique.
 */

#include "core/jobs/jobs_find.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

#include <gpufleet/catalog.h>

#include "core/jobs/ctl_impl.h"
#include "util/hash.h"

int gf__model_find(const struct gf_cluster *c, const char *name)
{
	for (int m = 0; m < c->nmodels; m++)
		if (strcasecmp(c->models[m], name) == 0)
			return m;
	return -1;
}

int gf__model_resolve(const struct gf_cluster *c, const char *name)
{
	int m = gf__model_find(c, name);
	for (int k = 0; m < 0 && k < c->nmodels; k++)
		if (gf_catalog_same(c->models[k], name))
			m = k;
	return m;
}

_Static_assert(offsetof(struct gf_ctl_class, name) == 0, "name first");
_Static_assert(offsetof(struct gf_ctl_team, name) == 0, "name first");
_Static_assert(offsetof(struct gf__team, name) == 0, "name first");

int gf__name_index(const void *list, size_t stride, int n, const char *name)
{
	const char *p = list;
	for (int i = 0; i < n; i++, p += stride)
		if (strcmp(p, name) == 0)
			return i;
	return -1;
}

int gf__class_find(const struct gf_ctl *ctl, const char *name)
{
	return gf__name_index(ctl->cfg.classes, sizeof(ctl->cfg.classes[0]),
			      ctl->cfg.nclasses, name);
}

bool gf__name_ok(const char *s, size_t size)
{
	if (!memchr(s, '\0', size) || s[0] == '\0')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("._-", *s)))
			return false;
	return true;
}

/* put cannot fail below the index's cap: */
_Static_assert(GF_MAX_CNODES < GF_HMAP_MAX, "nodes fit the name index");

/* The key an eq callback reads: the core and the name sought. */
struct key {
	const struct gf_ctl *ctl;
	const char *name;
};

static bool node_is(const void *key, uint32_t row)
{
	const struct key *k = key;
	return strcmp(k->ctl->c->names[row], k->name) == 0;
}

int gf__node_find(const struct gf_ctl *ctl, const char *name)
{
	if (name == NULL || !memchr(name, '\0', GF_JOB_NODE_MAX))
		return -1;
	struct key k = { ctl, name };
	return (int)gf_hmap_get(&ctl->nodes.names, gf_hash_str(name), node_is,
				&k);
}

int gf__names_insert(struct gf_ctl *ctl, int i)
{
	const char *name = ctl->c->names[i];
	if (gf__node_find(ctl, name) >= 0)
		return GF_ECONFLICT;
	int rc = gf_hmap_put(&ctl->nodes.names, gf_hash_str(name), (uint32_t)i);
	if (rc == 0)
		ctl->nodes.name_n = i + 1;
	return rc;
}
