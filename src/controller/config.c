/*
 * config.c - the controller's YAML config through libyaml's document API
 * (every node carries its line), and the node table it describes.
 *
 * Reading is strict: unknown keys, wrong types and out-of-range numbers
 * are errors naming file:line and the key; nothing is half-applied (the
 * caller reads into a fresh config and keeps the old one on error).
 */
#include "controller/config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include <gpufleet/mig.h>

#include "sim/synth.h"
#include "sim/trace.h"
#include "util/file.h"
#include "util/mem.h"

struct rd {
	yaml_document_t *doc;
	const char *path;
	struct gf_err *e;
};

__attribute__((format(printf, 3, 4))) static int
fail(const struct rd *r, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gf_err_set(r->e, GF_EPARSE, "%s:%d: %s", r->path,
			  n ? (int)n->start_mark.line + 1 : 0, msg);
}

static yaml_node_t *node(const struct rd *r, int id)
{
	return yaml_document_get_node(r->doc, id);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE
		       ? (const char *)n->data.scalar.value
		       : NULL;
}

static int want_str(const struct rd *r, const yaml_node_t *n, const char *key,
		    char *out, size_t size)
{
	const char *s = scalar(n);
	if (!s)
		return fail(r, n, "key '%s': expected a string", key);
	if (strlen(s) >= size || (*s == '\0'))
		return fail(r, n, "key '%s': expected 1 to %zu characters", key,
			    size - 1);
	snprintf(out, size, "%s", s);
	return 0;
}

static int want_int(const struct rd *r, const yaml_node_t *n, const char *key,
		    long long min, long long max, long long *out)
{
	const char *s = scalar(n);
	char *end;
	errno = 0;
	long long v = s ? strtoll(s, &end, 10) : 0;
	if (!s || *s == '\0' || *end || errno || v < min || v > max)
		return fail(r, n,
			    "key '%s': expected a whole number from %lld "
			    "to %lld, got '%.40s'",
			    key, min, max, s ? s : "(not a number)");
	*out = v;
	return 0;
}

static int want_bool(const struct rd *r, const yaml_node_t *n, const char *key,
		     bool *out)
{
	const char *s = scalar(n);
	if (s && (!strcmp(s, "true") || !strcmp(s, "yes"))) {
		*out = true;
		return 0;
	}
	if (s && (!strcmp(s, "false") || !strcmp(s, "no"))) {
		*out = false;
		return 0;
	}
	return fail(r, n, "key '%s': expected true or false", key);
}

static int want_double(const struct rd *r, const yaml_node_t *n,
		       const char *key, double min, double max, double *out)
{
	const char *s = scalar(n);
	char *end;
	double v = s ? strtod(s, &end) : 0;
	if (!s || *s == '\0' || *end || !(v >= min && v <= max))
		return fail(r, n, "key '%s': expected a number from %g to %g",
			    key, min, max);
	*out = v;
	return 0;
}

/* A mapping of labels into "k=v,k=v". */
static int want_labels(const struct rd *r, const yaml_node_t *n,
		       const char *key, char *out, size_t size)
{
	if (!n || n->type != YAML_MAPPING_NODE)
		return fail(r, n, "key '%s': expected a mapping of labels",
			    key);
	size_t len = strlen(out);
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
	     p < n->data.mapping.pairs.top; p++) {
		const char *k = scalar(node(r, p->key));
		const char *v = scalar(node(r, p->value));
		if (!k || !v || !*k || strpbrk(k, "=,") || strpbrk(v, "=,"))
			return fail(r, node(r, p->key),
				    "key '%s': a label must be a plain "
				    "key: value without '=' or ','",
				    key);
		int w = snprintf(out + len, size - len, "%s%s=%s",
				 len ? "," : "", k, v);
		if (w < 0 || (size_t)w >= size - len)
			return fail(r, n,
				    "key '%s': labels longer than %zu "
				    "characters",
				    key, size - 1);
		len += (size_t)w;
	}
	return 0;
}

/* A list of node names. */
static int want_names(const struct rd *r, const yaml_node_t *n, const char *key,
		      char (**out)[GF_NODE_NAME_MAX], int *count)
{
	if (!n || n->type != YAML_SEQUENCE_NODE)
		return fail(r, n, "key '%s': expected a list of node names",
			    key);
	int k = (int)(n->data.sequence.items.top -
		      n->data.sequence.items.start);
	if (k > GF_SERVE_MAX_POOL_NODES)
		return fail(r, n, "key '%s': more than %d names", key,
			    GF_SERVE_MAX_POOL_NODES);
	*out = gf_calloc((size_t)(k ? k : 1), sizeof(**out));
	*count = 0;
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		int rc = want_str(r, node(r, *it), key, (*out)[*count],
				  GF_NODE_NAME_MAX);
		if (rc)
			return rc;
		(*count)++;
	}
	return 0;
}

typedef int (*field_fn)(const struct rd *r, const char *key,
			const yaml_node_t *v, void *obj);

/* Walk a mapping, handing each key to fn (which refuses unknown ones). */
static int each_key(const struct rd *r, const yaml_node_t *n, const char *what,
		    field_fn fn, void *obj)
{
	if (!n || n->type != YAML_MAPPING_NODE)
		return fail(r, n, "%s: expected a mapping", what);
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
	     p < n->data.mapping.pairs.top; p++) {
		const char *k = scalar(node(r, p->key));
		if (!k)
			return fail(r, node(r, p->key), "%s: keys are strings",
				    what);
		int rc = fn(r, k, node(r, p->value), obj);
		if (rc)
			return rc;
	}
	return 0;
}

static int unknown(const struct rd *r, const yaml_node_t *v, const char *where,
		   const char *key, const char *known)
{
	return fail(r, v, "%s: unknown key '%s' (known: %s)", where, key,
		    known);
}

/* ---- classes ------------------------------------------------------ */

static int class_field(const struct rd *r, const char *k, const yaml_node_t *v,
		       void *obj)
{
	struct gf_ctl_class *c = obj;
	long long x;
	int rc;
	if (!strcmp(k, "name"))
		return want_str(r, v, "name", c->name, sizeof(c->name));
	if (!strcmp(k, "priority")) {
		rc = want_int(r, v, k, -1000000, 1000000, &x);
		c->priority = (int)x;
		return rc;
	}
	if (!strcmp(k, "preemptible"))
		return want_bool(r, v, k, &c->preemptible);
	if (!strcmp(k, "max_runtime_s")) {
		rc = want_int(r, v, k, 0, 100LL * 365 * 86400, &x);
		c->max_runtime_s = x;
		return rc;
	}
	if (!strcmp(k, "max_attempts")) {
		rc = want_int(r, v, k, 1, 1000, &x);
		c->max_attempts = (int)x;
		return rc;
	}
	return unknown(r, v, "class", k,
		       "name, priority, preemptible, max_runtime_s, "
		       "max_attempts");
}

static int read_classes(const struct rd *r, const yaml_node_t *n,
			struct gf_ctl_config *cfg)
{
	if (!n || n->type != YAML_SEQUENCE_NODE)
		return fail(r, n, "key 'classes': expected a list");
	cfg->nclasses = 0;
	bool batch = false;
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		const yaml_node_t *c = node(r, *it);
		if (cfg->nclasses >= GF_CTL_MAX_CLASSES)
			return fail(r, c, "key 'classes': more than %d",
				    GF_CTL_MAX_CLASSES);
		struct gf_ctl_class *k = &cfg->classes[cfg->nclasses];
		memset(k, 0, sizeof(*k));
		int rc = each_key(r, c, "class", class_field, k);
		if (rc)
			return rc;
		if (!k->name[0])
			return fail(r, c, "class: key 'name' is required");
		for (int i = 0; i < cfg->nclasses; i++)
			if (!strcmp(cfg->classes[i].name, k->name))
				return fail(r, c, "class '%s' given twice",
					    k->name);
		batch |= !strcmp(k->name, "batch");
		cfg->nclasses++;
	}
	if (!batch)
		return fail(r, n,
			    "key 'classes': a class named 'batch' is "
			    "required (the default class of a job)");
	return 0;
}

/* ---- teams -------------------------------------------------------- */

/* A mapping NAME: COUNT into typed quota entries. */
static int read_quota_map(const struct rd *r, const yaml_node_t *n,
			  const char *key, struct gf_ctl_quota *q, int *nq)
{
	if (!n || n->type != YAML_MAPPING_NODE)
		return fail(r, n,
			    "key '%s': expected a mapping of "
			    "NAME: COUNT",
			    key);
	*nq = 0;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
	     p < n->data.mapping.pairs.top; p++) {
		if (*nq >= GF_CTL_MAX_QUOTAS)
			return fail(r, n, "key '%s': more than %d entries", key,
				    GF_CTL_MAX_QUOTAS);
		int rc = want_str(r, node(r, p->key), key, q[*nq].what,
				  sizeof(q[*nq].what));
		long long v;
		if (!rc)
			rc = want_int(r, node(r, p->value), key, 0, 1000000,
				      &v);
		if (rc)
			return rc;
		q[(*nq)++].limit = v;
	}
	return 0;
}

static int quota_field(const struct rd *r, const char *k, const yaml_node_t *v,
		       void *obj)
{
	struct gf_ctl_team *t = obj;
	t->has_quota = true;
	if (!strcmp(k, "gpus"))
		return read_quota_map(r, v, "quota.gpus", t->gpus, &t->ngpus);
	if (!strcmp(k, "mig"))
		return read_quota_map(r, v, "quota.mig", t->mig, &t->nmig);
	if (!strcmp(k, "milli")) {
		long long x;
		int rc = want_int(r, v, "quota.milli", 0, 1000000000, &x);
		t->milli = x;
		return rc;
	}
	return unknown(r, v, "quota", k, "gpus, mig, milli");
}

static int team_field(const struct rd *r, const char *k, const yaml_node_t *v,
		      void *obj)
{
	struct gf_ctl_team *t = obj;
	if (!strcmp(k, "name"))
		return want_str(r, v, "name", t->name, sizeof(t->name));
	if (!strcmp(k, "weight"))
		return want_double(r, v, k, 0.001, 1e6, &t->weight);
	if (!strcmp(k, "quota"))
		return each_key(r, v, "quota", quota_field, t);
	return unknown(r, v, "team", k, "name, weight, quota");
}

static int read_teams(const struct rd *r, const yaml_node_t *n,
		      struct gf_ctl_config *cfg)
{
	if (!n || n->type != YAML_SEQUENCE_NODE)
		return fail(r, n, "key 'teams': expected a list");
	cfg->nteams = 0;
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		const yaml_node_t *tn = node(r, *it);
		if (cfg->nteams >= GF_CTL_MAX_TEAMS)
			return fail(r, tn, "key 'teams': more than %d",
				    GF_CTL_MAX_TEAMS);
		struct gf_ctl_team *t = &cfg->teams[cfg->nteams];
		memset(t, 0, sizeof(*t));
		t->weight = 1;
		t->milli = -1;
		int rc = each_key(r, tn, "team", team_field, t);
		if (rc)
			return rc;
		if (!t->name[0])
			return fail(r, tn, "team: key 'name' is required");
		for (int i = 0; i < cfg->nteams; i++)
			if (!strcmp(cfg->teams[i].name, t->name))
				return fail(r, tn, "team '%s' given twice",
					    t->name);
		cfg->nteams++;
	}
	return 0;
}

/* ---- pools, blocks, labels --------------------------------------- */

struct pool_ctx {
	struct gf_serve_pool *p;
};

static int mig_field(const struct rd *r, const char *k, const yaml_node_t *v,
		     void *obj)
{
	struct gf_serve_pool *p = obj;
	if (!strcmp(k, "gpus")) {
		if (!v || v->type != YAML_SEQUENCE_NODE)
			return fail(r, v,
				    "key 'mig.gpus': expected a list of "
				    "GPU indexes");
		for (yaml_node_item_t *it = v->data.sequence.items.start;
		     it < v->data.sequence.items.top; it++) {
			long long g;
			int rc = want_int(r, node(r, *it), "mig.gpus", 0,
					  GF_CNODE_MAX_GPUS - 1, &g);
			if (rc)
				return rc;
			p->mig_gpus |= UINT32_C(1) << g;
		}
		return 0;
	}
	if (!strcmp(k, "layout")) {
		/* profile names are checked against the pool's model once
		 * the whole pool is read */
		if (!v || v->type != YAML_MAPPING_NODE)
			return fail(r, v,
				    "key 'mig.layout': expected "
				    "PROFILE: COUNT");
		size_t len = 0;
		for (yaml_node_pair_t *q = v->data.mapping.pairs.start;
		     q < v->data.mapping.pairs.top; q++) {
			const char *name = scalar(node(r, q->key));
			long long c;
			int rc = want_int(r, node(r, q->value), "mig.layout", 0,
					  7, &c);
			if (rc)
				return rc;
			if (!name || len + 40 >= sizeof(p->mig_desc))
				return fail(r, v,
					    "key 'mig.layout': too "
					    "many profiles");
			len += (size_t)snprintf(
				p->mig_desc + len, sizeof(p->mig_desc) - len,
				"%s%s=%lld", len ? "," : "", name, c);
		}
		return 0;
	}
	return unknown(r, v, "mig", k, "gpus, layout");
}

static int pool_field(const struct rd *r, const char *k, const yaml_node_t *v,
		      void *obj)
{
	struct gf_serve_pool *p = obj;
	long long x;
	int rc;
	if (!strcmp(k, "name"))
		return want_str(r, v, "name", p->name, sizeof(p->name));
	if (!strcmp(k, "nodes")) {
		if (v && v->type == YAML_SEQUENCE_NODE)
			return want_names(r, v, "nodes", &p->names, &p->nnames);
		rc = want_int(r, v, "nodes", 1, GF_SERVE_MAX_POOL_NODES, &x);
		p->count = (int)x;
		return rc;
	}
	if (!strcmp(k, "model"))
		return want_str(r, v, "model", p->model, sizeof(p->model));
	if (!strcmp(k, "gpus")) {
		rc = want_int(r, v, k, 0, GF_CNODE_MAX_GPUS, &x);
		p->gpus = (int)x;
		return rc;
	}
	if (!strcmp(k, "cpu_milli")) {
		rc = want_int(r, v, k, 0, INT32_MAX, &x);
		p->cpu_milli = (int32_t)x;
		return rc;
	}
	if (!strcmp(k, "memory_mib")) {
		rc = want_int(r, v, k, 0, INT64_MAX / 2, &x);
		p->memory_mib = x;
		return rc;
	}
	if (!strcmp(k, "labels"))
		return want_labels(r, v, "labels", p->labels,
				   sizeof(p->labels));
	if (!strcmp(k, "block"))
		return want_str(r, v, "block", p->block, sizeof(p->block));
	if (!strcmp(k, "mig"))
		return each_key(r, v, "mig", mig_field, p);
	return unknown(r, v, "pool", k,
		       "name, nodes, model, gpus, cpu_milli, memory_mib, "
		       "labels, block, mig");
}

static int read_pools(const struct rd *r, const yaml_node_t *n,
		      struct gf_serve_config *cfg)
{
	if (!n || n->type != YAML_SEQUENCE_NODE)
		return fail(r, n, "key 'pools': expected a list");
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		const yaml_node_t *pn = node(r, *it);
		if (cfg->npools >= GF_SERVE_MAX_POOLS)
			return fail(r, pn, "key 'pools': more than %d",
				    GF_SERVE_MAX_POOLS);
		struct gf_serve_pool *p = &cfg->pools[cfg->npools++];
		memset(p, 0, sizeof(*p));
		p->line = (int)pn->start_mark.line + 1;
		int rc = each_key(r, pn, "pool", pool_field, p);
		if (rc)
			return rc;
		if (!p->name[0])
			return fail(r, pn, "pool: key 'name' is required");
		if (!p->count && !p->nnames)
			return fail(r, pn,
				    "pool '%s': key 'nodes' (a count "
				    "or names) is required",
				    p->name);
		if (p->gpus > 0 && !p->model[0])
			return fail(r, pn,
				    "pool '%s': key 'model' is required "
				    "for nodes with GPUs",
				    p->name);
		if ((p->mig_gpus != 0) != (p->mig_desc[0] != '\0'))
			return fail(r, pn,
				    "pool '%s': 'mig' needs both 'gpus' "
				    "and 'layout'",
				    p->name);
	}
	return 0;
}

struct assign_ctx {
	struct gf_serve_assign *a;
	bool block; /* a blocks entry, else a labels entry */
};

static int assign_field(const struct rd *r, const char *k, const yaml_node_t *v,
			void *obj)
{
	struct assign_ctx *x = obj;
	if (!strcmp(k, "nodes"))
		return want_names(r, v, "nodes", &x->a->names, &x->a->nnames);
	if (x->block && !strcmp(k, "name"))
		return want_str(r, v, "name", x->a->block, sizeof(x->a->block));
	if (!x->block && !strcmp(k, "labels"))
		return want_labels(r, v, "labels", x->a->labels,
				   sizeof(x->a->labels));
	return unknown(r, v, x->block ? "block" : "labels entry", k,
		       x->block ? "name, nodes" : "nodes, labels");
}

static int read_assigns(const struct rd *r, const yaml_node_t *n, bool block,
			struct gf_serve_config *cfg)
{
	if (!n || n->type != YAML_SEQUENCE_NODE)
		return fail(r, n, "key '%s': expected a list",
			    block ? "blocks" : "labels");
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		const yaml_node_t *an = node(r, *it);
		if (cfg->nassigns >= GF_SERVE_MAX_ASSIGNMENTS)
			return fail(r, an,
				    "more than %d blocks and labels "
				    "entries",
				    GF_SERVE_MAX_ASSIGNMENTS);
		struct assign_ctx x = { &cfg->assigns[cfg->nassigns++], block };
		memset(x.a, 0, sizeof(*x.a));
		x.a->line = (int)an->start_mark.line + 1;
		int rc = each_key(r, an, block ? "block" : "labels entry",
				  assign_field, &x);
		if (rc)
			return rc;
		if (block && !x.a->block[0])
			return fail(r, an, "block: key 'name' is required");
		if (!x.a->nnames)
			return fail(r, an, "%s: key 'nodes' is required",
				    block ? "block" : "labels entry");
	}
	return 0;
}

/* ---- agents -------------------------------------------------------- */

static int agents_field(const struct rd *r, const char *k, const yaml_node_t *v,
			void *obj)
{
	struct gf_serve_agents *a = obj;
	long long x;
	int rc;
	int64_t *dst = !strcmp(k, "heartbeat_s")	? &a->heartbeat_ms
		       : !strcmp(k, "notready_after_s") ? &a->notready_after_ms
		       : !strcmp(k, "requeue_after_s")	? &a->requeue_after_ms
		       : !strcmp(k, "kill_grace_s")	? &a->kill_grace_ms
							: NULL;
	if (dst) {
		rc = want_int(r, v, k, 0, 86400, &x);
		*dst = (int64_t)x * 1000;
		return rc;
	}
	if (!strcmp(k, "mig_auto_apply"))
		return want_bool(r, v, k, &a->mig_auto_apply);
	if (!strcmp(k, "fence"))
		return want_bool(r, v, k, &a->fence);
	return unknown(r, v, "agents", k,
		       "heartbeat_s, notready_after_s, requeue_after_s, "
		       "kill_grace_s, mig_auto_apply, fence");
}

/* The times must make sense together: at least two heartbeats before
 * NotReady, and the fence (gf_serve_agents_fence_ms) a heartbeat or more
 * after the last answered one. */
static int read_agents(const struct rd *r, const yaml_node_t *n,
		       struct gf_serve_agents *a)
{
	int rc = each_key(r, n, "agents", agents_field, a);
	if (rc)
		return rc;
	a->line = (int)n->start_mark.line + 1;
	if (a->heartbeat_ms < 1000 ||
	    a->notready_after_ms < 2 * a->heartbeat_ms)
		return fail(r, n,
			    "agents: expected heartbeat_s >= 1 and "
			    "notready_after_s at least twice heartbeat_s");
	if (a->requeue_after_ms < a->notready_after_ms)
		return fail(r, n,
			    "agents: requeue_after_s must be at least "
			    "notready_after_s");
	if (a->fence && gf_serve_agents_fence_ms(a) <= a->heartbeat_ms)
		return fail(r, n,
			    "agents: with fence, requeue_after_s must leave "
			    "the agent time to stop its jobs first: more "
			    "than heartbeat_s + kill_grace_s + %d s",
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

static int charge_field(const struct rd *r, const char *k, const yaml_node_t *v,
			void *obj)
{
	struct gf_serve_config *cfg = obj;
	if (!strcmp(k, "prices"))
		return want_str(r, v, k, cfg->charge_prices,
				sizeof(cfg->charge_prices));
	if (!strcmp(k, "cluster"))
		return want_str(r, v, k, cfg->charge_cluster,
				sizeof(cfg->charge_cluster));
	return unknown(r, v, "chargeback", k, "prices, cluster");
}

/* ---- the root ------------------------------------------------------ */

static int root_field(const struct rd *r, const char *k, const yaml_node_t *v,
		      void *obj)
{
	struct gf_serve_config *cfg = obj;
	if (!strcmp(k, "policy")) {
		const char *s = scalar(v);
		enum gf_policy p;
		if (!s || gf_policy_parse(s, &p) != 0)
			return fail(r, v,
				    "key 'policy': unknown '%s' (known: "
				    "random, dotprod, clustering, packing, "
				    "bestfit, fgd, fgdplus)",
				    s ? s : "");
		cfg->ctl.policy = p;
		return 0;
	}
	if (!strcmp(k, "open_teams"))
		return want_bool(r, v, k, &cfg->ctl.open_teams);
	if (!strcmp(k, "classes"))
		return read_classes(r, v, &cfg->ctl);
	if (!strcmp(k, "teams"))
		return read_teams(r, v, &cfg->ctl);
	if (!strcmp(k, "pools"))
		return read_pools(r, v, cfg);
	if (!strcmp(k, "blocks"))
		return read_assigns(r, v, true, cfg);
	if (!strcmp(k, "labels"))
		return read_assigns(r, v, false, cfg);
	if (!strcmp(k, "agents"))
		return read_agents(r, v, &cfg->agents);
	if (!strcmp(k, "chargeback"))
		return each_key(r, v, "chargeback", charge_field, cfg);
	return unknown(r, v, "config", k,
		       "policy, open_teams, classes, teams, pools, blocks, "
		       "labels, agents, chargeback");
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
	snprintf(cfg->ctl.blocks[0], sizeof(cfg->ctl.blocks[0]), "default");
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
	char *text;
	size_t len;
	int rc = gf_file_read(path, GF_SERVE_CONFIG_MAX, &text, &len, e);
	if (rc)
		return rc;
	snprintf(cfg->path, sizeof(cfg->path), "%s", path);
	yaml_parser_t p;
	yaml_document_t doc;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &doc)) {
		rc = gf_err_set(e, GF_EPARSE, "%s:%zu: malformed YAML: %s",
				path, p.problem_mark.line + 1,
				p.problem ? p.problem : "?");
		yaml_parser_delete(&p);
		gf_free(text);
		return rc;
	}
	struct rd r = { &doc, path, e };
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (root == NULL)
		rc = gf_err_set(e, GF_EPARSE, "%s: empty config", path);
	else
		rc = each_key(&r, root, "config", root_field, cfg);
	yaml_document_delete(&doc);
	yaml_parser_delete(&p);
	gf_free(text);
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
	cfg->npools = cfg->nassigns = 0;
}
