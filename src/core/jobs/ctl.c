/*
 * ctl.c - the scheduling core's lifecycle: the config and the nodes
 * checked (nothing is taken or changed when they are refused), the
 * tables built (teams, blocks, node names, MIG instances, admission
 * groups, the typical mix), the engine created; accessors and the
 * figures for /metrics.
 *
 * Invariants set up here and kept by the other files: teams[0..
 * cfg.nteams) are the config's teams in its order (teams not in the
 * config follow); every node's block is < nodes.nblk and the block lists
 * partition the nodes; node names are unique (jobs_find.c); prio_order lists
 * the classes by priority, highest first. Nodes added later (jobs_nodes.c) go
 * through the same steps one by one: the names, the MIG instances (jobs_mig.c),
 * the blocks, the admission groups.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/jobs/admit.h"
#include "core/jobs/ctl_impl.h"
#include "core/jobs/jobs_find.h"
#include "core/jobs/jobs_mig.h"
#include "core/jobs/jobs_nodes.h"
#include "core/jobs/jobs_state.h"
#include "core/jobs/mask.h"
#include "core/jobs/never.h"
#include "core/jobs/order.h"
#include "core/jobs/quota.h"
#include "core/jobs/table.h"
#include "core/jobs/teams.h"
#include "core/jobs/typical.h"
#include "util/fmt.h"
#include "util/mem.h"

/* A team's quota entries (check_list's more()). */
static int check_quotas(const void *entry, struct gf_err *e)
{
	const struct gf_ctl_team *t = entry;
	if (t->ngpus < 0 || t->ngpus > GF_CTL_MAX_QUOTAS || t->nmig < 0 ||
	    t->nmig > GF_CTL_MAX_QUOTAS)
		return gf_err_set(e, GF_EINVAL,
				  "team %s: at most %d quota entries per kind",
				  t->name, GF_CTL_MAX_QUOTAS);
	for (int k = 0; k < t->ngpus + t->nmig; k++) {
		const struct gf_ctl_quota *q =
			k < t->ngpus ? &t->gpus[k] : &t->mig[k - t->ngpus];
		const struct gf_ctl_quota *list =
			k < t->ngpus ? t->gpus : t->mig;
		int first = k < t->ngpus ? 0 : t->ngpus;
		if (!memchr(q->what, '\0', sizeof(q->what)) || !q->what[0] ||
		    q->limit < 0)
			return gf_err_set(e, GF_EINVAL,
					  "team %s: quota entry %d: a name and "
					  "a limit >= 0",
					  t->name, k - first);
		for (int p = first; p < k; p++)
			if (strcasecmp(list[p - first].what, q->what) == 0)
				return gf_err_set(e, GF_EINVAL,
						  "team %s: quota for '%s' "
						  "twice",
						  t->name, q->what);
	}
	if (t->milli < -1)
		return gf_err_set(e, GF_EINVAL,
				  "team %s: share quota %lld (milli-GPU, -1 "
				  "unlimited)",
				  t->name, (long long)t->milli);
	return 0;
}

/* The entries of a config list (kind "team", "class"), n of them stride
 * bytes apart from list, each starting with its name (size bytes): each
 * a name not listed before, then what more() checks of it; the first
 * error. */
static int check_list(const char *kind, const void *list, size_t stride,
		      size_t size, int n,
		      int (*more)(const void *entry, struct gf_err *e),
		      struct gf_err *e)
{
	const char *names = list;
	for (int k = 0; k < n; k++) {
		const char *name = names + (size_t)k * stride;
		if (!gf__name_ok(name, size))
			return gf_err_set(e, GF_EINVAL,
					  "%s %d: a name of letters, digits, "
					  "'.', '_', '-'",
					  kind, k);
		if (gf__name_index(names, stride, k, name) >= 0)
			return gf_err_set(e, GF_EINVAL, "%s %s listed twice",
					  kind, name);
		int rc = more(name, e);
		if (rc)
			return rc;
	}
	return 0;
}

static int check_teams(const struct gf_ctl_config *cfg, struct gf_err *e)
{
	if (cfg->nteams < 0 || cfg->nteams > GF_CTL_MAX_TEAMS)
		return gf_err_set(e, GF_EINVAL, "%d teams, at most %d",
				  cfg->nteams, GF_CTL_MAX_TEAMS);
	return check_list("team", cfg->teams, sizeof(cfg->teams[0]),
			  sizeof(cfg->teams[0].name), cfg->nteams, check_quotas,
			  e);
}

/* A class's limits (check_list's more()). */
static int check_class(const void *entry, struct gf_err *e)
{
	const struct gf_ctl_class *c = entry;
	if (c->max_runtime_s < 0 || c->max_runtime_s > GF_JOB_RUNTIME_MAX_S ||
	    c->max_attempts < 0)
		return gf_err_set(e, GF_EINVAL,
				  "class %s: max runtime 0 to %lld s, "
				  "max attempts >= 0",
				  c->name, (long long)GF_JOB_RUNTIME_MAX_S);
	return 0;
}

static int check_classes(const struct gf_ctl_config *cfg, struct gf_err *e)
{
	if (cfg->nclasses < 1 || cfg->nclasses > GF_CTL_MAX_CLASSES)
		return gf_err_set(e, GF_EINVAL, "%d classes: 1 to %d",
				  cfg->nclasses, GF_CTL_MAX_CLASSES);
	int rc = check_list("class", cfg->classes, sizeof(cfg->classes[0]),
			    sizeof(cfg->classes[0].name), cfg->nclasses,
			    check_class, e);
	if (rc)
		return rc;
	for (int k = 0; k < cfg->nclasses; k++)
		if (strcmp(cfg->classes[k].name, "batch") == 0)
			return 0;
	return gf_err_set(e, GF_EINVAL, "no class 'batch' (the default class)");
}

static int check_config(const struct gf_ctl_config *cfg, struct gf_err *e)
{
	if ((unsigned)cfg->policy >= GF_POLICY_COUNT)
		return gf_err_set(e, GF_EINVAL, "unknown placement policy %d",
				  (int)cfg->policy);
	int rc = check_classes(cfg, e);
	if (rc == 0)
		rc = check_teams(cfg, e);
	if (rc)
		return rc;
	if (cfg->nblocks < 1 || cfg->nblocks > GF_CTL_MAX_BLOCKS)
		return gf_err_set(e, GF_EINVAL, "%d blocks: 1 to %d",
				  cfg->nblocks, GF_CTL_MAX_BLOCKS);
	for (int b = 0; b < cfg->nblocks; b++)
		if (!memchr(cfg->blocks[b], '\0', sizeof(cfg->blocks[b])))
			return gf_err_set(e, GF_EINVAL,
					  "block %d: name not terminated", b);
	return 0;
}

/* Node i's MIG model and instances against it. */
static int check_mig(struct gf_ctl *ctl, int i,
		     char names[][GF_MIG_PROFILE_MAX], int *nnames,
		     struct gf_err *e)
{
	struct gf_ctl_node *nd = &ctl->nodes.cfg[i];
	const struct gf_cnode *cn = &ctl->c->nodes[i];
	const char *model = cn->ngpus ? ctl->c->models[cn->model] : "";
	if (!memchr(nd->mig_model, '\0', sizeof(nd->mig_model)) ||
	    gf__mig_model_for(nd->mig_model, model, &ctl->nodes.ns[i].mig))
		return gf_err_set(
			e, GF_EINVAL, "node %s: unknown MIG model '%.*s'",
			ctl->c->names[i], GF_MODEL_NAME_MAX - 1, nd->mig_model);
	if (gf_fmt(nd->mig_model, sizeof(nd->mig_model), "%s",
		   ctl->nodes.ns[i].mig ? ctl->nodes.ns[i].mig->id : ""))
		return gf_err_set(e, GF_ETOOBIG,
				  "node %s: MIG model id '%s' too long",
				  ctl->c->names[i], ctl->nodes.ns[i].mig->id);
	return gf__mig_check(ctl, ctl->c->names[i], cn->ngpus,
			     ctl->nodes.ns[i].mig, model, nd->mig, nd->nmig,
			     names, nnames, e);
}

/* The nodes: blocks, labels, unique names, MIG (before anything but the
 * core's own tables changes). */
static int check_nodes(struct gf_ctl *ctl, struct gf_err *e)
{
	struct gf_cluster *c = ctl->c;
	char why[160];
	char(*names)[GF_MIG_PROFILE_MAX] =
		gf_calloc(GF__MAX_PROFILES, GF_MIG_PROFILE_MAX);
	int nnames = 0, rc = 0;
	for (int i = 0; i < c->n && rc == 0; i++)
		rc = check_mig(ctl, i, names, &nnames, e);
	gf_free(names);
	if (rc)
		return rc;
	for (int i = 0; i < c->n; i++) {
		const struct gf_ctl_node *nd = &ctl->nodes.cfg[i];
		if (nd->block < 0 || nd->block >= ctl->cfg.nblocks)
			return gf_err_set(e, GF_EINVAL,
					  "node %s: block %d does not exist "
					  "(%d blocks)",
					  c->names[i], nd->block,
					  ctl->cfg.nblocks);
		if (!memchr(nd->labels, '\0', sizeof(nd->labels)) ||
		    gf__labels_check(nd->labels, why, sizeof(why)))
			return gf_err_set(
				e, GF_EINVAL, "node %s: labels: %s",
				c->names[i],
				memchr(nd->labels, '\0', sizeof(nd->labels))
					? why
					: "not terminated");
		if (gf__names_insert(ctl, i))
			return gf_err_set(e, GF_EINVAL,
					  "node name '%s' given twice",
					  c->names[i]);
	}
	return 0;
}

static void build_teams(struct gf_ctl *ctl)
{
	for (int t = 0; t < ctl->cfg.nteams; t++) {
		const struct gf_ctl_team *x = &ctl->cfg.teams[t];
		int k = gf__team_get(ctl, x->name);
		ctl->teams.t[k].cfg = t;
		ctl->teams.t[k].weight = x->weight > 0 ? x->weight : 1;
		gf__team_limits(ctl, &ctl->teams.t[k], x);
	}
}

/* Everything after the checks passed; cannot fail but for the engine. */
static int build(struct gf_ctl *ctl)
{
	int n = ctl->c->n;
	for (int i = 0; i < n; i++) {
		ctl->nodes.ns[i].grp = -1;
		gf__mig_install(ctl, i); /* MIG GPUs held (no engine yet) */
	}
	ctl->nodes.nblk = ctl->cfg.nblocks;
	for (int i = 0; i < n; i++)
		gf__block_join(&ctl->nodes, &ctl->c->nodes[i], i);
	build_teams(ctl);
	gf__order_sort_classes(ctl);
	ctl->adm = gf_calloc(1, sizeof(*ctl->adm));
	gf__admit_setup(ctl);
	int rc = gf__typical_default(ctl);
	if (rc == 0)
		rc = gf_sched_new(ctl->c, ctl->cfg.policy, ctl->typ, ctl->ntyp,
				  1, ctl->cfg.seed, &ctl->s);
	if (rc == 0) /* jobs without GPU: CPU nodes first (admit.c too) */
		gf_sched_set_cpu_apart(ctl->s, true);
	if (rc == 0)
		gf_sched_set_mix(ctl->s, ctl->mix, ctl->nmix);
	if (rc == 0 && ctl->cfg.fgdplus_t > 0)
		rc = gf_sched_set_fgdplus_t(ctl->s, ctl->cfg.fgdplus_t);
	if (rc == 0)
		rc = gf_sched_set_fgdplus_without(ctl->s,
						  ctl->cfg.fgdplus_without);
	return rc;
}

int gf_ctl_new(const struct gf_ctl_config *cfg, struct gf_cluster *c,
	       const struct gf_ctl_node *nodes, struct gf_ctl **out,
	       struct gf_err *e)
{
	gf_err_clear(e);
	*out = NULL;
	int rc = check_config(cfg, e);
	if (rc)
		return rc;
	if (c->n < 0 || c->n > GF_MAX_CNODES)
		return gf_err_set(e, GF_EINVAL, "%d nodes", c->n);
	struct gf_ctl *ctl = gf_calloc(1, sizeof(*ctl));
	ctl->cfg = *cfg;
	ctl->c = c;
	gf__nodes_reserve(ctl, c->n);
	if (nodes)
		memcpy(ctl->nodes.cfg, nodes, (size_t)c->n * sizeof(*nodes));
	ctl->nodes.blk = gf_calloc(GF_CTL_MAX_BLOCKS, sizeof(*ctl->nodes.blk));
	ctl->masks.gen = 1;
	rc = check_nodes(ctl, e); /* last check: then it builds */
	if (rc == 0) {
		rc = build(ctl);
		if (rc)
			gf_err_set(e, rc, "cannot build the placement engine");
	}
	if (rc) {
		ctl->c = NULL; /* not taken */
		gf_ctl_free(ctl);
		return rc;
	}
	*out = ctl;
	return 0;
}

void gf_ctl_free(struct gf_ctl *ctl)
{
	if (ctl == NULL)
		return;
	gf__jobtab_free(&ctl->jobs);
	gf__never_free(ctl);
	gf__arrays_free(&ctl->arrays);
	gf__deps_free(&ctl->deps);
	gf__teams_free(&ctl->teams);
	gf__mig_free(ctl);
	gf__masks_free(ctl);
	gf__admit_free(ctl);
	gf_sched_free(ctl->s);
	gf__typical_free(ctl);
	gf_free(ctl->scratch);
	gf_free(ctl->not_h);
	gf_free(ctl->trial_of);
	gf__nodes_free(&ctl->nodes, ctl->c ? ctl->c->n : 0);
	if (ctl->c) {
		gf_cluster_release(ctl->c);
		gf_free(ctl->c);
	}
	gf_free(ctl);
}

const struct gf_ctl_config *gf_ctl_config(const struct gf_ctl *ctl)
{
	return &ctl->cfg;
}

const struct gf_cluster *gf_ctl_cluster(const struct gf_ctl *ctl)
{
	return ctl->c;
}

const struct gf_ctl_node *gf_ctl_node(const struct gf_ctl *ctl, int i)
{
	return i >= 0 && i < ctl->c->n ? &ctl->nodes.cfg[i] : NULL;
}

int gf_ctl_nnodes(const struct gf_ctl *ctl)
{
	return ctl->c->n;
}

int gf_ctl_node_find(const struct gf_ctl *ctl, const char *name)
{
	return gf__node_find(ctl, name);
}

int gf_ctl_nteams(const struct gf_ctl *ctl)
{
	return ctl->teams.n;
}

const char *gf_ctl_team_name(const struct gf_ctl *ctl, int i)
{
	return gf__teams_name(&ctl->teams, i);
}

void gf_ctl_stats(const struct gf_ctl *ctl, struct gf_ctl_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->pending = ctl->jobs.npending;
	st->running = ctl->jobs.running.n;
	st->gpus_total_milli = ctl->c->gpu_milli_total;
	int64_t mig_milli = 0;
	for (int x = 0; x < ctl->mig.ninst; x++)
		if (ctl->mig.inst[x].user >= 0)
			mig_milli += ctl->mig.prof_milli[ctl->mig.inst[x].prof];
	/* the engine counts GPUs in MIG mode as held, not given out */
	st->gpus_alloc_milli = gf_sched_alloc_milli(ctl->s) + mig_milli;
	st->frag_milli = gf_sched_frag_total(ctl->s);
	st->mig_total = ctl->mig.ninst;
	st->mig_used = ctl->mig.used;
	for (int i = 0; i < ctl->c->n; i++) {
		const struct gf__node *x = &ctl->nodes.ns[i];
		const struct gf_cnode *n = &ctl->c->nodes[i];
		bool ready = x->state == GF__READY;
		st->nodes_ready += ready;
		st->nodes_notready += !ready;
		st->gpus_unhealthy += __builtin_popcount(x->sick);
		for (uint32_t m = x->sick & ~x->mig_gpus; m; m &= m - 1)
			st->gpus_unavailable_milli +=
				ctl->c->held[i][__builtin_ctz(m)];
		if (!ready)
			st->gpus_unavailable_milli += n->idle;
	}
}
