/*
 * ctl_build.h - the clusters, configs and jobs test_ctl.c and
 * test_ctl_life.c build the scheduling core from: a config with one
 * preemptible class "batch", one block and open teams; classes, teams
 * and typed quotas added; a cluster from node definitions (128 cores,
 * 1 TiB each); a core made and checked; jobs numbered in order;
 * submit (admit, add, check).
 */
#ifndef GF_TEST_CTL_BUILD_H
#define GF_TEST_CTL_BUILD_H

#include "ctl_helpers.h"
#include "util/mem.h"

static uint64_t next_seq;

struct ndef {
	const char *name;
	int gpus;
	const char *model;
	int block;
	const char *labels;
};

static inline struct gf_ctl_config *cfg_new(void)
{
	struct gf_ctl_config *c = gf_calloc(1, sizeof(*c));
	c->policy = GF_POLICY_FGD;
	c->nclasses = 1;
	snprintf(c->classes[0].name, GF_CLASS_NAME_MAX, "batch");
	c->classes[0].preemptible = true;
	c->nblocks = 1;
	snprintf(c->blocks[0], GF_NODE_NAME_MAX, "b0");
	c->open_teams = true;
	c->seed = 1;
	return c;
}

static inline struct gf_ctl_class *
cls_add(struct gf_ctl_config *c, const char *name, int prio, bool preemptible)
{
	struct gf_ctl_class *k = &c->classes[c->nclasses++];
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->priority = prio;
	k->preemptible = preemptible;
	return k;
}

static inline struct gf_ctl_team *team_add(struct gf_ctl_config *c,
					   const char *name, double weight)
{
	struct gf_ctl_team *t = &c->teams[c->nteams++];
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->weight = weight;
	t->milli = -1;
	return t;
}

static inline void quota(struct gf_ctl_team *t, bool mig, const char *what,
			 int64_t limit)
{
	struct gf_ctl_quota *q =
		mig ? &t->mig[t->nmig++] : &t->gpus[t->ngpus++];
	snprintf(q->what, sizeof(q->what), "%s", what);
	q->limit = limit;
	t->has_quota = true;
}

static inline struct gf_cluster *cluster_of(const struct ndef *d, int n)
{
	struct gf_cluster *c = gf_calloc(1, sizeof(*c));
	gf_cluster_init(c);
	for (int i = 0; i < n; i++) {
		int m = gf_cluster_model(c,
					 d[i].model ? d[i].model : "h100-80gb");
		assert_true(m >= 0);
		assert_int_equal(gf_cluster_add(c, d[i].name, 128000, 1 << 20,
						d[i].gpus, m),
				 i);
	}
	return c;
}

static inline struct gf_ctl_node *nodes_of(const struct ndef *d, int n)
{
	struct gf_ctl_node *nd = gf_calloc((size_t)n, sizeof(*nd));
	for (int i = 0; i < n; i++) {
		nd[i].block = d[i].block;
		snprintf(nd[i].labels, sizeof(nd[i].labels), "%s",
			 d[i].labels ? d[i].labels : "");
	}
	return nd;
}

static inline void mig_add(struct gf_ctl_node *nd, int gpu, const char *profile,
			   int start)
{
	struct gf_ctl_mig *x = &nd->mig[nd->nmig++];
	x->gpu = gpu;
	snprintf(x->profile, sizeof(x->profile), "%s", profile);
	x->start = start;
}

static inline struct gf_ctl *ctl_new(struct gf_ctl_config *cfg,
				     const struct ndef *d, int n,
				     struct gf_ctl_node *nd)
{
	struct gf_cluster *c = cluster_of(d, n);
	bool own = nd == NULL;
	next_seq = 0;
	if (own)
		nd = nodes_of(d, n);
	struct gf_ctl *ctl;
	struct gf_err e;
	int rc = gf_ctl_new(cfg, c, nd, &ctl, &e);
	if (rc)
		print_message("gf_ctl_new: %s\n", e.msg);
	assert_int_equal(rc, 0);
	if (own)
		gf_free(nd);
	gf_free(cfg);
	check(ctl);
	return ctl;
}

static inline struct gf_job *job(const char *team, const char *cls)
{
	struct gf_job *j = gf_calloc(1, sizeof(*j));
	j->seq = ++next_seq;
	snprintf(j->id, sizeof(j->id), "j%llu", (unsigned long long)j->seq);
	snprintf(j->spec.team, sizeof(j->spec.team), "%s", team);
	snprintf(j->spec.class_name, sizeof(j->spec.class_name), "%s", cls);
	j->spec.replicas = 1;
	j->spec.cpu_milli = 1000;
	j->spec.memory_mib = 1024;
	j->state = GF_JOB_PENDING;
	j->submitted_ms = 1;
	j->block = -1;
	return j;
}

static inline struct gf_job *gpus(const char *team, const char *cls,
				  int replicas, int n)
{
	struct gf_job *j = job(team, cls);
	j->spec.replicas = replicas;
	j->spec.gpus = n;
	return j;
}

/* Admit and add; the id stays valid (jobs are never dropped). */
static inline const char *submit(struct gf_ctl *ctl, struct gf_job *j)
{
	struct gf_err e;
	int rc = gf_ctl_admit(ctl, &j->spec, &e);
	if (rc)
		print_message("admit %s: %s\n", j->id, e.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(gf_ctl_add(ctl, j, &e), 0);
	check(ctl);
	return gf_ctl_job(ctl, j->id)->id;
}

/* The ids a pass changed, in order, are want (space-separated). */
static inline void expect_starts(const struct gf_ctl_changes *ch,
				 const char *want)
{
	char got[256] = "";
	for (int i = 0; i < ch->n; i++) {
		size_t l = strlen(got);
		snprintf(got + l, sizeof(got) - l, "%s%s", i ? " " : "",
			 ch->ids[i]);
	}
	assert_string_equal(got, want);
}

#endif
