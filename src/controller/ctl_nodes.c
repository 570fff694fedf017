/*
 * ctl_nodes.c - the controller's node table from the config: a CSV in the
 * simulator's format, the config's pools, or the built-in cluster; then
 * blocks, labels and MIG layouts.  Node names are unique (every API and
 * stored placement names nodes); every error names the config line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/catalog.h>
#include <gpufleet/mig.h>

#include "controller/config.h"
#include "trace/synth.h"
#include "trace/trace.h"
#include "util/buf.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

/* Index of block `name`, added when new; GF_ETOOBIG past the limit. */
static int block_index(struct gf_ctl_config *ctl, const char *name)
{
	for (int i = 0; i < ctl->nblocks; i++)
		if (!strcmp(ctl->blocks[i], name))
			return i;
	if (ctl->nblocks >= GF_CTL_MAX_BLOCKS)
		return GF_ETOOBIG;
	if (gf_fmt(ctl->blocks[ctl->nblocks], sizeof(ctl->blocks[0]), "%s",
		   name) != 0)
		return GF_EINVAL; /* the config's names are of that size */
	return ctl->nblocks++;
}

/* 0, or GF_ETOOBIG when the node's labels would be over their size. */
static int add_labels(struct gf_ctl_node *n, const char *labels)
{
	size_t len = strlen(n->labels);
	if (!*labels)
		return 0;
	int rc = gf_fmt(n->labels + len, sizeof(n->labels) - len, "%s%s",
			len ? "," : "", labels);
	if (rc)
		n->labels[len] = '\0'; /* as it was */
	return rc;
}

static const struct gf_cluster *sort_c;

static int cmp_name(const void *a, const void *b)
{
	return strcmp(sort_c->names[*(const int *)a],
		      sort_c->names[*(const int *)b]);
}

/* Node indexes sorted by name; duplicates are an error. */
static int *name_index(const struct gf_cluster *c, const char *src,
		       struct gf_err *e)
{
	int *idx = gf_calloc((size_t)(c->n ? c->n : 1), sizeof(*idx));
	for (int i = 0; i < c->n; i++)
		idx[i] = i;
	sort_c = c;
	qsort(idx, (size_t)c->n, sizeof(*idx), cmp_name);
	sort_c = NULL;
	for (int i = 1; i < c->n; i++)
		if (!strcmp(c->names[idx[i - 1]], c->names[idx[i]])) {
			gf_err_set(e, GF_EINVAL,
				   "%s: node name '%s' given twice", src,
				   c->names[idx[i]]);
			gf_free(idx);
			return NULL;
		}
	return idx;
}

static int find_node(const struct gf_cluster *c, const int *idx,
		     const char *name)
{
	int lo = 0, hi = c->n - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2, k = strcmp(c->names[idx[mid]], name);
		if (k == 0)
			return idx[mid];
		if (k < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static int add_pool_nodes(struct gf_serve_config *cfg, struct gf_cluster *c,
			  struct gf_err *e)
{
	for (int k = 0; k < cfg->npools; k++) {
		struct gf_serve_pool *p = &cfg->pools[k];
		int m = 0;
		if (p->gpus > 0 && (m = gf_cluster_model(c, p->model)) < 0)
			return gf_err_set(e, GF_ETOOBIG,
					  "%s:%d: pool '%s': more than %d GPU "
					  "models",
					  cfg->path, p->line, p->name,
					  GF_MAX_MODELS);
		int n = p->count ? p->count : p->nnames;
		for (int i = 0; i < n; i++) {
			char name[GF_NODE_NAME_MAX + 16];
			int frc = p->count ? gf_fmt(name, sizeof(name),
						    "%.36s-%04d", p->name,
						    i % 1000000)
					   : gf_fmt(name, sizeof(name), "%s",
						    p->names[i]);
			if (frc)
				return gf_err_set(e, GF_EINVAL,
						  "%s:%d: pool '%s': a node "
						  "name over %zu bytes",
						  cfg->path, p->line, p->name,
						  sizeof(name) - 1);
			if (gf_cluster_add(c, name, p->cpu_milli, p->memory_mib,
					   p->gpus, m) < 0)
				return gf_err_set(e, GF_ETOOBIG,
						  "%s:%d: pool '%s': more than "
						  "%d nodes",
						  cfg->path, p->line, p->name,
						  GF_MAX_CNODES);
		}
	}
	return 0;
}

/* "1g.10gb=7,..." into counts per profile of model m. */
static int mig_counts(const struct gf_serve_config *cfg,
		      const struct gf_serve_pool *p,
		      const struct gf_mig_model *m, int *counts,
		      struct gf_err *e)
{
	char buf[sizeof(p->mig_desc)], *save = NULL;
	memcpy(buf, p->mig_desc, sizeof(buf));
	memset(counts, 0, sizeof(int) * 32);
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		*eq = '\0';
		int pi = gf_mig_profile_find(m, t);
		if (pi < 0)
			return gf_err_set(e, GF_EINVAL,
					  "%s:%d: pool '%s': '%s' is not a MIG "
					  "profile of %s",
					  cfg->path, p->line, p->name, t,
					  m->id);
		counts[pi] += atoi(eq + 1);
	}
	return 0;
}

static int pool_mig(const struct gf_serve_config *cfg,
		    const struct gf_serve_pool *p, struct gf_ctl_node *nodes,
		    int first, int n, struct gf_err *e)
{
	const struct gf_mig_model *m = gf_mig_model_by_id(p->model);
	if (m == NULL)
		return gf_err_set(e, GF_EINVAL,
				  "%s:%d: pool '%s': model '%s' has no MIG "
				  "profiles gpufleet knows",
				  cfg->path, p->line, p->name, p->model);
	int counts[32];
	int rc = mig_counts(cfg, p, m, counts, e);
	if (rc)
		return rc;
	struct gf_mig_layout l = { .n = 0 };
	if (gf_mig_place(m, counts, &l) != 0)
		return gf_err_set(e, GF_EINVAL,
				  "%s:%d: pool '%s': layout %s does not fit "
				  "one %s",
				  cfg->path, p->line, p->name, p->mig_desc,
				  m->id);
	for (int g = 0; g < GF_CNODE_MAX_GPUS; g++) {
		if (!(p->mig_gpus >> g & 1))
			continue;
		if (g >= p->gpus)
			return gf_err_set(e, GF_EINVAL,
					  "%s:%d: pool '%s': MIG on GPU %d of "
					  "%d-GPU nodes",
					  cfg->path, p->line, p->name, g,
					  p->gpus);
		for (int i = first; i < first + n; i++)
			for (int j = 0; j < l.n; j++) {
				struct gf_ctl_node *nd = &nodes[i];
				if (nd->nmig >= GF_CTL_MAX_MIG)
					return gf_err_set(
						e, GF_ETOOBIG,
						"%s:%d: pool '%s': more than "
						"%d MIG instances per node",
						cfg->path, p->line, p->name,
						GF_CTL_MAX_MIG);
				struct gf_ctl_mig *x = &nd->mig[nd->nmig++];
				x->gpu = g;
				x->start = l.inst[j].start;
				if (gf_fmt(x->profile, sizeof(x->profile), "%s",
					   m->profiles[l.inst[j].profile].name))
					return gf_err_set(
						e, GF_EINVAL,
						"%s:%d: MIG profile "
						"'%s': too long",
						cfg->path, p->line,
						m->profiles[l.inst[j].profile]
							.name);
			}
	}
	return 0;
}

/* Pools' labels, blocks and MIG onto their nodes (added in pool order). */
static int apply_pools(struct gf_serve_config *cfg, struct gf_ctl_node *nodes,
		       struct gf_err *e)
{
	int first = 0;
	for (int k = 0; k < cfg->npools; k++) {
		const struct gf_serve_pool *p = &cfg->pools[k];
		int n = p->count ? p->count : p->nnames;
		int b = p->block[0] ? block_index(&cfg->ctl, p->block) : 0;
		if (b < 0)
			return gf_err_set(e, b, "%s:%d: more than %d blocks",
					  cfg->path, p->line,
					  GF_CTL_MAX_BLOCKS);
		for (int i = first; i < first + n; i++) {
			if (add_labels(&nodes[i], p->labels) != 0)
				return gf_err_set(e, GF_EINVAL,
						  "%s:%d: a node's labels are "
						  "over %d bytes",
						  cfg->path, p->line,
						  GF_CTL_LABELS_MAX - 1);
			nodes[i].block = b;
		}
		if (p->mig_gpus) {
			int rc = pool_mig(cfg, p, nodes, first, n, e);
			if (rc)
				return rc;
		}
		first += n;
	}
	return 0;
}

static int apply_assigns(struct gf_serve_config *cfg,
			 const struct gf_cluster *c, const int *idx,
			 struct gf_ctl_node *nodes, struct gf_err *e)
{
	for (int k = 0; k < cfg->nassigns; k++) {
		const struct gf_serve_assign *a = &cfg->assigns[k];
		int b = a->block[0] ? block_index(&cfg->ctl, a->block) : -1;
		if (a->block[0] && b < 0)
			return gf_err_set(e, b, "%s:%d: more than %d blocks",
					  cfg->path, a->line,
					  GF_CTL_MAX_BLOCKS);
		for (int j = 0; j < a->nnames; j++) {
			int i = find_node(c, idx, a->names[j]);
			if (i < 0)
				return gf_err_set(e, GF_EINVAL,
						  "%s:%d: no node named '%s'",
						  cfg->path, a->line,
						  a->names[j]);
			if (b >= 0)
				nodes[i].block = b;
			else if (add_labels(&nodes[i], a->labels) != 0)
				return gf_err_set(
					e, GF_EINVAL,
					"%s:%d: node '%s': its labels "
					"are over %d bytes",
					cfg->path, a->line, a->names[j],
					GF_CTL_LABELS_MAX - 1);
		}
	}
	return 0;
}

int gf_serve_build_nodes(struct gf_serve_config *cfg, const char *nodes_csv,
			 struct gf_cluster *c, struct gf_ctl_node **nodes,
			 struct gf_err *e)
{
	*nodes = NULL;
	gf_cluster_init(c);
	int rc;
	const char *src = cfg->path[0] ? cfg->path : "the built-in cluster";
	if (nodes_csv && cfg->npools)
		rc = gf_err_set(e, GF_EINVAL,
				"%s: 'pools' define nodes; with a node CSV, "
				"label its nodes with 'labels' and group them "
				"with 'blocks'",
				cfg->path);
	else if (nodes_csv)
		rc = gf_trace_load_nodes(nodes_csv, c, e);
	else if (cfg->npools)
		rc = add_pool_nodes(cfg, c, e);
	else
		rc = gf_synth_cluster(c);
	if (rc) {
		if (e && e->msg[0] == '\0')
			gf_err_set(e, rc, "%s: cannot build the nodes", src);
		goto fail;
	}
	if (nodes_csv)
		src = nodes_csv;
	int *idx = name_index(c, src, e);
	if (idx == NULL) {
		rc = GF_EINVAL;
		goto fail;
	}
	*nodes = gf_calloc((size_t)(c->n ? c->n : 1), sizeof(**nodes));
	rc = apply_pools(cfg, *nodes, e);
	if (rc == 0)
		rc = apply_assigns(cfg, c, idx, *nodes, e);
	gf_free(idx);
	if (rc == 0)
		return 0;
	gf_free(*nodes);
fail:
	gf_cluster_release(c);
	return rc;
}

/* labels (k=v,...) with k=v set: any k= entry replaced. */
static void set_label(char *labels, size_t lsize, const char *kv)
{
	size_t klen = strcspn(kv, "=");
	char copy[GF_CTL_LABELS_MAX], *save = NULL;
	if (gf_fmt(copy, sizeof(copy), "%s", labels) != 0)
		return; /* labels of that size: cannot happen */
	struct gf_buf out;
	gf_buf_init(&out, lsize - 1);
	for (char *t = strtok_r(copy, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		if (strncmp(t, kv, klen) == 0 && t[klen] == '=')
			continue;
		gf_buf_printf(&out, "%s%s", out.len ? "," : "", t);
	}
	size_t len = out.len;
	if (len + 1 + strlen(kv) < lsize)
		gf_buf_printf(&out, "%s%s", len ? "," : "", kv);
	/* at most lsize - 1 bytes: the labels it had, kv when it fits */
	if (!gf_buf_error(&out) &&
	    gf_fmt(labels, lsize, "%s", gf_buf_str(&out)) != 0)
		labels[0] = '\0'; /* cannot happen: the buffer's cap */
	gf_buf_release(&out);
}

void gf_serve_config_node(const struct gf_serve_config *cfg, const char *name,
			  char *block, size_t bsize, char *labels, size_t lsize)
{
	for (int k = 0; k < cfg->nassigns; k++) {
		const struct gf_serve_assign *a = &cfg->assigns[k];
		for (int j = 0; j < a->nnames; j++) {
			if (strcmp(a->names[j], name) != 0)
				continue;
			if (a->block[0]) {
				/* bsize is a block name's: it fits */
				if (gf_fmt(block, bsize, "%s", a->block) != 0)
					block[0] = '\0';
				continue;
			}
			char l[GF_CTL_LABELS_MAX], *save = NULL;
			_Static_assert(sizeof(l) == sizeof(a->labels),
				       "one size");
			memcpy(l, a->labels, sizeof(l));
			for (char *kv = strtok_r(l, ",", &save); kv;
			     kv = strtok_r(NULL, ",", &save))
				set_label(labels, lsize, kv);
		}
	}
}

/* ---- model names nothing resolves ------------------------------------ */

bool gf_serve_model_unknown(const struct gf_cluster *c, const char *name)
{
	if (gf_catalog_lookup(name))
		return false;
	for (int m = 0; m < c->nmodels; m++)
		if (gf_catalog_same(c->models[m], name))
			return false;
	return true;
}

int gf_serve_model_warnings(const struct gf_serve_config *cfg,
			    const struct gf_cluster *c, char *why, size_t size)
{
	int n = 0;
	if (size)
		why[0] = '\0';
	for (int t = 0; t < cfg->ctl.nteams; t++) {
		const struct gf_ctl_team *x = &cfg->ctl.teams[t];
		for (int k = 0; k < x->ngpus; k++) {
			const char *what = x->gpus[k].what;
			if (!strcmp(what, "*") ||
			    !gf_serve_model_unknown(c, what))
				continue;
			char msg[GF_ERR_MSG_MAX];
			char where[600];
			if (x->gpus[k].line > 0)
				gf_note(where, sizeof(where), "%s:%d",
					cfg->path[0] ? cfg->path : "config",
					x->gpus[k].line);
			else
				gf_note(where, sizeof(where), "%s",
					cfg->path[0] ? cfg->path : "config");
			gf_note(msg, sizeof(msg),
				"%s: team '%s': quota.gpus '%s': no node has "
				"that GPU model and it is no catalog model's "
				"id, alias, NVML name or GFD product: the "
				"entry matches no node",
				where, x->name, what);
			gf_log(GF_LOG_WARN, "serve", "%s", msg);
			if (n++ == 0)
				gf_note(why, size, "%s", msg);
		}
	}
	return n;
}

bool gf_serve_selector_unknown(const struct gf_cluster *c, const char *selector,
			       char *model, size_t size)
{
	static const char key[] = GF_GFD_PRODUCT_LABEL "=";
	const char *p = strstr(selector, key);
	while (p && p != selector && p[-1] != ',')
		p = strstr(p + 1, key);
	if (!p)
		return false;
	p += sizeof(key) - 1;
	if (gf_fmt(model, size, "%.*s", (int)strcspn(p, ","), p))
		return false; /* longer than any model name: labels check */
	return gf_serve_model_unknown(c, model);
}
