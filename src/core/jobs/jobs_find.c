/*
 * jobs_find.c - finding things by name in the scheduling core: GPU
 * models and classes (few: a scan), nodes and jobs (many: util/hash.h's
 * gf_hmap over their names and ids).
 *
 * Invariants: names indexes nodes 0..name_n-1 by name, ids every jrec
 * of the table by job id; names and ids are unique.
 */

#include "core/jobs/jobs_find.h"

#include <string.h>
#include <strings.h>

#include "core/jobs/ctl_impl.h"
#include "util/hash.h"

int gf__model_find(const struct gf_cluster *c, const char *name)
{
	for (int m = 0; m < c->nmodels; m++)
		if (strcasecmp(c->models[m], name) == 0)
			return m;
	return -1;
}

int gf__class_find(const struct gf_ctl *ctl, const char *name)
{
	for (int k = 0; k < ctl->cfg.nclasses; k++)
		if (strcmp(ctl->cfg.classes[k].name, name) == 0)
			return k;
	return -1;
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
_Static_assert(GF_CTL_MAX_JOBS < GF_HMAP_MAX, "jobs fit the id index");

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

static bool job_is(const void *key, uint32_t row)
{
	const struct key *k = key;
	return strcmp(k->ctl->jr[row].job->id, k->name) == 0;
}

int gf__node_find(const struct gf_ctl *ctl, const char *name)
{
	if (name == NULL || !memchr(name, '\0', GF_JOB_NODE_MAX))
		return -1;
	struct key k = { ctl, name };
	return (int)gf_hmap_get(&ctl->names, gf_hash_str(name), node_is, &k);
}

int gf__names_insert(struct gf_ctl *ctl, int i)
{
	const char *name = ctl->c->names[i];
	if (gf__node_find(ctl, name) >= 0)
		return GF_ECONFLICT;
	int rc = gf_hmap_put(&ctl->names, gf_hash_str(name), (uint32_t)i);
	if (rc == 0)
		ctl->name_n = i + 1;
	return rc;
}

int gf__job_find(const struct gf_ctl *ctl, const char *id)
{
	if (id == NULL || !memchr(id, '\0', GF_JOB_ID_MAX))
		return -1;
	struct key k = { ctl, id };
	return (int)gf_hmap_get(&ctl->ids, gf_hash_str(id), job_is, &k);
}

int gf__job_get(const struct gf_ctl *ctl, const char *id, struct gf_err *e)
{
	int jid = gf__job_find(ctl, id);
	if (jid < 0)
		return gf_err_set(e, GF_ENOTFOUND, "no job '%.*s'",
				  GF_JOB_ID_MAX, id ? id : "");
	return jid;
}

void gf__job_index(struct gf_ctl *ctl, int jid)
{
	int rc = gf_hmap_put(&ctl->ids, gf_hash_str(ctl->jr[jid].job->id),
			     (uint32_t)jid);
	(void)rc; /* no fail below GF_HMAP_MAX rows: asserted above */
}
