/*
 * config.c - the controller's YAML config through util/yaml
 * (every node carries its line), and the node table it describes.
 *
 * Reading is strict: unknown keys, wrong types and out-of-range numbers
 * are errors naming file:line and the key; nothing is half-applied (the
 * caller reads into a fresh config and keeps the old one on error).
 */
#include "controller/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/mig.h>

#include "chargeback/chargeback.h"
#include "trace/synth.h"
#include "trace/trace.h"
#include "util/file.h"
#include "util/fmt.h"
#include "util/mem.h"
#include "util/yaml.h"

typedef struct gf_yr rd_t;
typedef struct gf_yn node_t;

/* A mapping of labels into "k=v,k=v". */
static int want_labels(const rd_t *r, const node_t *n, const char *key,
		       char *out, size_t size)
{
	if (gf_yn_type(n) != GF_YN_MAP)
		return gf_yr_fail(
			r, n, "key '%s': expected a mapping of labels", key);
	size_t len = strlen(out);
	const node_t *kn, *vn;
	for (size_t i = 0; gf_yn_pair(n, i, &kn, &vn); i++) {
		const char *k = gf_yn_str(kn), *v = gf_yn_str(vn);
		if (!k || !v || !*k || strpbrk(k, "=,") || strpbrk(v, "=,"))
			return gf_yr_fail(r, kn,
					  "key '%s': a label must be a plain "
					  "key: value without '=' or ','",
					  key);
		if (gf_fmt(out + len, size - len, "%s%s=%s", len ? "," : "", k,
			   v))
			return gf_yr_fail(r, n,
					  "key '%s': labels longer than %zu "
					  "characters",
					  key, size - 1);
		len += strlen(out + len);
	}
	return 0;
}

/* A list of node names. */
static int want_names(const rd_t *r, const node_t *n, const char *key,
		      char (**out)[GF_NODE_NAME_MAX], int *count)
{
	if (gf_yn_type(n) != GF_YN_SEQ)
		return gf_yr_fail(
			r, n, "key '%s': expected a list of node names", key);
	size_t k = gf_yn_len(n);
	if (k > GF_SERVE_MAX_POOL_NODES)
		return gf_yr_fail(r, n, "key '%s': more than %d names", key,
				  GF_SERVE_MAX_POOL_NODES);
	*out = gf_calloc(k ? k : 1, sizeof(**out));
	*count = 0;
	for (size_t i = 0; i < k; i++) {
		int rc = gf_yr_str(r, gf_yn_at(n, i), key, 1, (*out)[*count],
				   GF_NODE_NAME_MAX);
		if (rc)
			return rc;
		(*count)++;
	}
	return 0;
}

/* A whole number from min to max into an int. */
static int want_int(const rd_t *r, const node_t *n, const char *key, int min,
		    int max, int *out)
{
	long long x;
	int rc = gf_yr_int(r, n, key, min, max, &x);
	if (rc == 0)
		*out = (int)x;
	return rc;
}

/* ---- classes ------------------------------------------------------ */

#define CLASS_KEYS "name, priority, preemptible, max_runtime_s, max_attempts"

static int class_field(const rd_t *r, const char *k, const node_t *v, void *obj)
{
	struct gf_ctl_class *c = obj;
	long long x;
	int rc;
	if (!strcmp(k, "name"))
		return gf_yr_str(r, v, "name", 1, c->name, sizeof(c->name));
	if (!strcmp(k, "priority"))
		return want_int(r, v, k, -1000000, 1000000, &c->priority);
	if (!strcmp(k, "preemptible"))
		return gf_yr_bool(r, v, k, &c->preemptible);
	if (!strcmp(k, "max_runtime_s")) {
		rc = gf_yr_int(r, v, k, 0, 100LL * 365 * 86400, &x);
		c->max_runtime_s = x;
		return rc;
	}
	return want_int(r, v, "max_attempts", 1, 1000, &c->max_attempts);
}

/* Each item of list n read by fn into the next of count entries of size
 * bytes at rows (at most max), which must have a unique name (the first
 * field of each entry). */
static int read_list(const rd_t *r, const node_t *n, const char *key,
		     const char *what, const char *known, gf_yr_field fn,
		     void *rows, size_t size, int max, int *count,
		     void (*init)(void *row))
{
	if (gf_yn_type(n) != GF_YN_SEQ)
		return gf_yr_fail(r, n, "key '%s': expected a list", key);
	*count = 0;
	for (size_t i = 0; i < gf_yn_len(n); i++) {
		const node_t *c = gf_yn_at(n, i);
		if (*count >= max)
			return gf_yr_fail(r, c, "key '%s': more than %d", key,
					  max);
		char *row = (char *)rows + (size_t)*count * size;
		memset(row, 0, size);
		if (init)
			init(row);
		int rc = gf_yr_each(r, c, what, known, fn, row);
		if (rc)
			return rc;
		if (!row[0])
			return gf_yr_fail(r, c, "%s: key 'name' is required",
					  what);
		for (int j = 0; j < *count; j++)
			if (!strcmp((char *)rows + (size_t)j * size, row))
				return gf_yr_fail(r, c, "%s '%s' given twice",
						  what, row);
		(*count)++;
	}
	return 0;
}

static int read_classes(const rd_t *r, const node_t *n,
			struct gf_ctl_config *cfg)
{
	int rc = read_list(r, n, "classes", "class", CLASS_KEYS, class_field,
			   cfg->classes, sizeof(cfg->classes[0]),
			   GF_CTL_MAX_CLASSES, &cfg->nclasses, NULL);
	if (rc)
		return rc;
	for (int i = 0; i < cfg->nclasses; i++)
		if (!strcmp(cfg->classes[i].name, "batch"))
			return 0;
	return gf_yr_fail(r, n,
			  "key 'classes': a class named 'batch' is "
			  "required (the default class of a job)");
}

/* ---- teams -------------------------------------------------------- */

/* A mapping NAME: COUNT into typed quota entries. */
static int read_quota_map(const rd_t *r, const node_t *n, const char *key,
			  struct gf_ctl_quota *q, int *nq)
{
	if (gf_yn_type(n) != GF_YN_MAP)
		return gf_yr_fail(r, n,
				  "key '%s': expected a mapping of "
				  "NAME: COUNT",
				  key);
	*nq = 0;
	const node_t *kn, *vn;
	for (size_t i = 0; gf_yn_pair(n, i, &kn, &vn); i++) {
		if (*nq >= GF_CTL_MAX_QUOTAS)
			return gf_yr_fail(r, n,
					  "key '%s': more than %d entries", key,
					  GF_CTL_MAX_QUOTAS);
		long long v;
		int rc = gf_yr_str(r, kn, key, 1, q[*nq].what,
				   sizeof(q[*nq].what));
		if (!rc)
			rc = gf_yr_int(r, vn, key, 0, 1000000, &v);
		if (rc)
			return rc;
		q[*nq].line = gf_yn_line(kn);
		q[(*nq)++].limit = v;
	}
	return 0;
}

static int quota_field(const rd_t *r, const char *k, const node_t *v, void *obj)
{
	struct gf_ctl_team *t = obj;
	t->has_quota = true;
	if (!strcmp(k, "gpus"))
		return read_quota_map(r, v, "quota.gpus", t->gpus, &t->ngpus);
	if (!strcmp(k, "mig"))
		return read_quota_map(r, v, "quota.mig", t->mig, &t->nmig);
	long long x;
	int rc = gf_yr_int(r, v, "quota.milli", 0, 1000000000, &x);
	t->milli = x;
	return rc;
}

static int team_field(const rd_t *r, const char *k, const node_t *v, void *obj)
{
	struct gf_ctl_team *t = obj;
	if (!strcmp(k, "name"))
		return gf_yr_str(r, v, "name", 1, t->name, sizeof(t->name));
	if (!strcmp(k, "weight"))
		return gf_yr_double(r, v, k, 0.001, 1e6, &t->weight);
	return gf_yr_each(r, v, "quota", "gpus, mig, milli", quota_field, t);
}

static void team_init(void *row)
{
	struct gf_ctl_team *t = row;
	t->weight = 1;
	t->milli = -1;
}

static int read_teams(const rd_t *r, const node_t *n, struct gf_ctl_config *cfg)
{
	return read_list(r, n, "teams", "team", "name, weight, quota",
			 team_field, cfg->teams, sizeof(cfg->teams[0]),
			 GF_CTL_MAX_TEAMS, &cfg->nteams, team_init);
}

/* ---- pools, blocks, labels --------------------------------------- */

static int mig_field(const rd_t *r, const char *k, const node_t *v, void *obj)
{
	struct gf_serve_pool *p = obj;
	if (!strcmp(k, "gpus")) {
		if (gf_yn_type(v) != GF_YN_SEQ)
			return gf_yr_fail(r, v,
					  "key 'mig.gpus': expected a list of "
					  "GPU indexes");
		for (size_t i = 0; i < gf_yn_len(v); i++) {
			int g;
			int rc = want_int(r, gf_yn_at(v, i), "mig.gpus", 0,
					  GF_CNODE_MAX_GPUS - 1, &g);
			if (rc)
				return rc;
			p->mig_gpus |= UINT32_C(1) << g;
		}
		return 0;
	}
	/* layout: profile names are checked against the pool's model once
	 * the whole pool is read */
	if (gf_yn_type(v) != GF_YN_MAP)
		return gf_yr_fail(r, v,
				  "key 'mig.layout': expected PROFILE: COUNT");
	size_t len = 0;
	const node_t *kn, *vn;
	for (size_t i = 0; gf_yn_pair(v, i, &kn, &vn); i++) {
		const char *name = gf_yn_str(kn);
		long long c;
		int rc = gf_yr_int(r, vn, "mig.layout", 0, 7, &c);
		if (rc)
			return rc;
		if (!name ||
		    gf_fmt(p->mig_desc + len, sizeof(p->mig_desc) - len,
			   "%s%s=%lld", len ? "," : "", name, c))
			return gf_yr_fail(
				r, v, "key 'mig.layout': too many profiles");
		len += strlen(p->mig_desc + len);
	}
	return 0;
}

#define POOL_KEYS                                                          \
	"name, nodes, model, gpus, cpu_milli, memory_mib, labels, block, " \
	"mig"

static int pool_field(const rd_t *r, const char *k, const node_t *v, void *obj)
{
	struct gf_serve_pool *p = obj;
	long long x;
	int rc;
	if (!strcmp(k, "name"))
		return gf_yr_str(r, v, "name", 1, p->name, sizeof(p->name));
	if (!strcmp(k, "nodes")) {
		if (gf_yn_type(v) == GF_YN_SEQ)
			return want_names(r, v, "nodes", &p->names, &p->nnames);
		return want_int(r, v, "nodes", 1, GF_SERVE_MAX_POOL_NODES,
				&p->count);
	}
	if (!strcmp(k, "model"))
		return gf_yr_str(r, v, "model", 1, p->model, sizeof(p->model));
	if (!strcmp(k, "gpus"))
		return want_int(r, v, k, 0, GF_CNODE_MAX_GPUS, &p->gpus);
	if (!strcmp(k, "cpu_milli")) {
		rc = gf_yr_int(r, v, k, 0, INT32_MAX, &x);
		p->cpu_milli = (int32_t)x;
		return rc;
	}
	if (!strcmp(k, "memory_mib")) {
		rc = gf_yr_int(r, v, k, 0, INT64_MAX / 2, &x);
		p->memory_mib = x;
		return rc;
	}
	if (!strcmp(k, "labels"))
		return want_labels(r, v, "labels", p->labels,
				   sizeof(p->labels));
	if (!strcmp(k, "block"))
		return gf_yr_str(r, v, "block", 1, p->block, sizeof(p->block));
	return gf_yr_each(r, v, "mig", "gpus, layout", mig_field, p);
}

/* What a pool must say once all of it is read. */
static int pool_done(const rd_t *r, const node_t *pn,
		     const struct gf_serve_pool *p)
{
	if (!p->name[0])
		return gf_yr_fail(r, pn, "pool: key 'name' is required");
	if (!p->count && !p->nnames)
		return gf_yr_fail(r, pn,
				  "pool '%s': key 'nodes' (a count "
				  "or names) is required",
				  p->name);
	if (p->gpus > 0 && !p->model[0])
		return gf_yr_fail(r, pn,
				  "pool '%s': key 'model' is required "
				  "for nodes with GPUs",
				  p->name);
	if ((p->mig_gpus != 0) != (p->mig_desc[0] != '\0'))
		return gf_yr_fail(r, pn,
				  "pool '%s': 'mig' needs both 'gpus' "
				  "and 'layout'",
				  p->name);
	return 0;
}

static int read_pools(const rd_t *r, const node_t *n,
		      struct gf_serve_config *cfg)
{
	if (gf_yn_type(n) != GF_YN_SEQ)
		return gf_yr_fail(r, n, "key 'pools': expected a list");
	for (size_t i = 0; i < gf_yn_len(n); i++) {
		const node_t *pn = gf_yn_at(n, i);
		if (cfg->npools >= GF_SERVE_MAX_POOLS)
			return gf_yr_fail(r, pn, "key 'pools': more than %d",
					  GF_SERVE_MAX_POOLS);
		struct gf_serve_pool *p = &cfg->pools[cfg->npools++];
		memset(p, 0, sizeof(*p));
		p->line = gf_yn_line(pn);
		int rc = gf_yr_each(r, pn, "pool", POOL_KEYS, pool_field, p);
		if (!rc)
			rc = pool_done(r, pn, p);
		if (rc)
			return rc;
	}
	return 0;
}

struct assign_ctx {
	struct gf_serve_assign *a;
	bool block; /* a blocks entry, else a labels entry */
};

static int assign_field(const rd_t *r, const char *k, const node_t *v,
			void *obj)
{
	struct assign_ctx *x = obj;
	if (!strcmp(k, "nodes"))
		return want_names(r, v, "nodes", &x->a->names, &x->a->nnames);
	if (x->block)
		return gf_yr_str(r, v, "name", 1, x->a->block,
				 sizeof(x->a->block));
	return want_labels(r, v, "labels", x->a->labels, sizeof(x->a->labels));
}

static int read_assigns(const rd_t *r, const node_t *n, bool block,
			struct gf_serve_config *cfg)
{
	const char *what = block ? "block" : "labels entry";
	if (gf_yn_type(n) != GF_YN_SEQ)
		return gf_yr_fail(r, n, "key '%s': expected a list",
				  block ? "blocks" : "labels");
	for (size_t i = 0; i < gf_yn_len(n); i++) {
		const node_t *an = gf_yn_at(n, i);
		if (cfg->nassigns >= GF_SERVE_MAX_ASSIGNMENTS)
			return gf_yr_fail(r, an,
					  "more than %d blocks and labels "
					  "entries",
					  GF_SERVE_MAX_ASSIGNMENTS);
		struct assign_ctx x = { &cfg->assigns[cfg->nassigns++], block };
		memset(x.a, 0, sizeof(*x.a));
		x.a->line = gf_yn_line(an);
		int rc = gf_yr_each(r, an, what,
				    block ? "name, nodes" : "nodes, labels",
				    assign_field, &x);
		if (rc)
			return rc;
		if (block && !x.a->block[0])
			return gf_yr_fail(r, an,
					  "block: key 'name' is required");
		if (!x.a->nnames)
			return gf_yr_fail(r, an, "%s: key 'nodes' is required",
					  what);
	}
	return 0;
}

/* ---- agents -------------------------------------------------------- */

static int agents_field(const rd_t *r, const char *k, const node_t *v,
			void *obj)
{
	struct gf_serve_agents *a = obj;
	long long x;
	int64_t *dst = !strcmp(k, "heartbeat_s")	? &a->heartbeat_ms
		       : !strcmp(k, "notready_after_s") ? &a->notready_after_ms
		       : !strcmp(k, "requeue_after_s")	? &a->requeue_after_ms
		       : !strcmp(k, "kill_grace_s")	? &a->kill_grace_ms
							: NULL;
	if (dst) {
		int rc = gf_yr_int(r, v, k, 0, 86400, &x);
		*dst = (int64_t)x * 1000;
		return rc;
	}
	if (!strcmp(k, "mig_auto_apply"))
		return gf_yr_bool(r, v, k, &a->mig_auto_apply);
	return gf_yr_bool(r, v, "fence", &a->fence);
}

/* The times must make sense together: at least two heartbeats before
 * NotReady, and the fence (gf_serve_agents_fence_ms) a heartbeat or more
 * after the last answered one. */
static int read_agents(const rd_t *r, const node_t *n,
		       struct gf_serve_agents *a)
{
	int rc = gf_yr_each(r, n, "agents",
			    "heartbeat_s, notready_after_s, requeue_after_s, "
			    "kill_grace_s, mig_auto_apply, fence",
			    agents_field, a);
	if (rc)
		return rc;
	a->line = gf_yn_line(n);
	if (a->heartbeat_ms < 1000 ||
	    a->notready_after_ms < 2 * a->heartbeat_ms)
		return gf_yr_fail(r, n,
				  "agents: expected heartbeat_s >= 1 and "
				  "notready_after_s at least twice "
				  "heartbeat_s");
	if (a->requeue_after_ms < a->notready_after_ms)
		return gf_yr_fail(r, n,
				  "agents: requeue_after_s must be at least "
				  "notready_after_s");
	if (a->fence && gf_serve_agents_fence_ms(a) <= a->heartbeat_ms)
		return gf_yr_fail(r, n,
				  "agents: with fence, requeue_after_s must "
				  "leave the agent time to stop its jobs "
				  "first: more than heartbeat_s + "
				  "kill_grace_s + %d s",
				  GF_SERVE_FENCE_MARGIN_MS / 1000);
	return 0;
}

int64_t gf_serve_agents_fence_ms(const struct gf_serve_agents *a)
{
	if (!a->fence)
		return 0; /* agents never stop their jobs on silence */
	return a->requeue_after_ms - a->kill_grace_ms -
	       GF_SERVE_FENCE_MARGIN_MS;
}

/* ---- chargeback ---------------------------------------------------- */

static int charge_field(const rd_t *r, const char *k, const node_t *v,
			void *obj)
{
	struct gf_serve_config *cfg = obj;
	if (!strcmp(k, "prices"))
		return gf_yr_str(r, v, k, 1, cfg->charge_prices,
				 sizeof(cfg->charge_prices));
	return gf_yr_str(r, v, "cluster", 1, cfg->charge_cluster,
			 sizeof(cfg->charge_cluster));
}

/* ---- the root ------------------------------------------------------ */

static int root_field(const rd_t *r, const char *k, const node_t *v, void *obj)
{
	struct gf_serve_config *cfg = obj;
	if (!strcmp(k, "policy")) {
		const char *s = gf_yn_str(v);
		enum gf_policy p;
		if (!s || gf_policy_parse(s, &p) != 0)
			return gf_yr_fail(r, v,
					  "key 'policy': unknown '%s' (known: "
					  "random, dotprod, clustering, "
					  "packing, bestfit, fgd, fgdplus)",
					  s ? s : "");
		cfg->ctl.policy = p;
		return 0;
	}
	if (!strcmp(k, "fgdplus_t")) /* FGD+'s T (sched.h) */
		return gf_yr_double(r, v, k, GF_FGDPLUS_T_MIN, GF_FGDPLUS_T_MAX,
				    &cfg->ctl.fgdplus_t);
	if (!strcmp(k, "open_teams"))
		return gf_yr_bool(r, v, k, &cfg->ctl.open_teams);
	if (!strcmp(k, "classes"))
		return read_classes(r, v, &cfg->ctl);
	if (!strcmp(k, "teams"))
		return read_teams(r, v, &cfg->ctl);
	if (!strcmp(k, "pools"))
		return read_pools(r, v, cfg);
	if (!strcmp(k, "blocks") || !strcmp(k, "labels"))
		return read_assigns(r, v, !strcmp(k, "blocks"), cfg);
	if (!strcmp(k, "agents"))
		return read_agents(r, v, &cfg->agents);
	if (!strcmp(k, "prices")) {
		if (!cfg->prices) {
			cfg->prices = gf_malloc(sizeof(*cfg->prices));
			gf_cb_prices_init(cfg->prices);
		}
		return gf_cb_prices_block(r, v, cfg->prices);
	}
	if (!strcmp(k, "allow_root")) /* jobs may run as root (issue 21) */
		return gf_yr_bool(r, v, k, &cfg->allow_root);
	return gf_yr_each(r, v, "chargeback", "prices, cluster", charge_field,
			  cfg);
}

void gf_serve_config_defaults(struct gf_serve_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->ctl.policy = GF_POLICY_FGD;
	cfg->ctl.open_teams = true;
	static const struct gf_ctl_class classes[] = {
		{ "inference", 200, false, 0, 3 },
		{ "training", 100, false, 0, 3 },
		{ "batch", 10, true, 0, 3 },
	};
	memcpy(cfg->ctl.classes, classes, sizeof(classes));
	cfg->ctl.nclasses = 3;
	memcpy(cfg->ctl.blocks[0], "default", sizeof("default"));
	cfg->ctl.nblocks = 1;
	cfg->ctl.seed = 1;
	cfg->agents = (struct gf_serve_agents){ .heartbeat_ms = 2000,
						.notready_after_ms = 40000,
						.requeue_after_ms = 300000,
						.kill_grace_ms = 10000 };
	cfg->pools = gf_calloc(GF_SERVE_MAX_POOLS, sizeof(*cfg->pools));
	cfg->assigns =
		gf_calloc(GF_SERVE_MAX_ASSIGNMENTS, sizeof(*cfg->assigns));
}

int gf_serve_config_read(const char *path, struct gf_serve_config *cfg,
			 struct gf_err *e)
{
	if (gf_fmt(cfg->path, sizeof(cfg->path), "%s", path))
		return gf_err_set(e, GF_ETOOBIG, "%.80s...: path too long",
				  path);
	struct gf_yaml *y;
	int rc = gf_yaml_read(path, GF_SERVE_CONFIG_MAX, &y, e);
	if (rc)
		return rc;
	struct gf_yr r = { y, e };
	const node_t *root = gf_yaml_root(y);
	if (root == NULL)
		rc = gf_err_set(e, GF_EPARSE, "%s: empty config", path);
	else
		rc = gf_yr_each(
			&r, root, "config",
			"policy, fgdplus_t, open_teams, classes, teams, pools, "
			"blocks, labels, agents, chargeback, prices, "
			"allow_root",
			root_field, cfg);
	gf_yaml_free(y);
	return rc;
}

void gf_serve_config_release(struct gf_serve_config *cfg)
{
	for (int i = 0; cfg->pools && i < cfg->npools; i++)
		gf_free(cfg->pools[i].names);
	for (int i = 0; cfg->assigns && i < cfg->nassigns; i++)
		gf_free(cfg->assigns[i].names);
	gf_free(cfg->pools);
	gf_free(cfg->assigns);
	if (cfg->prices)
		gf_cb_prices_release(cfg->prices);
	gf_free(cfg->prices);
	cfg->npools = cfg->nassigns = 0;
}
