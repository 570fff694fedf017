/*
 * k8s_decide_helpers.h - what the extender's decision tests share
 * (test_k8s_decide.c, test_k8s_answers.c): a core over no node with a
 * policy, nodes joined (ready, GPUs of a model, labels), a job run on
 * given GPUs, a pod's ask, and a node's verdict and score for it.
 */
#ifndef GF_TEST_K8S_DECIDE_HELPERS_H
#define GF_TEST_K8S_DECIDE_HELPERS_H

#include <gpufleet/catalog.h>
#include <gpufleet/ctl.h>
#include <gpufleet/job.h>

#include "ctl_helpers.h"
#include "k8s/answers.h"
#include "k8s/decide.h"
#include "k8s/k8s.h"
#include "k8s_helpers.h"
#include "util/buf.h"
#include "util/fmt.h"
#include "util/json.h"
#include "util/mem.h"

static uint64_t next_seq;

static inline struct gf_ctl *ctl_new(enum gf_policy p)
{
	struct gf_ctl_config *cfg = gf_calloc(1, sizeof(*cfg));
	cfg->policy = p;
	cfg->nclasses = 2;
	snprintf(cfg->classes[0].name, GF_CLASS_NAME_MAX, "batch");
	cfg->classes[0].preemptible = true;
	cfg->classes[0].priority = 10;
	snprintf(cfg->classes[1].name, GF_CLASS_NAME_MAX, "pods");
	cfg->classes[1].priority = 200;
	cfg->nblocks = 1;
	snprintf(cfg->blocks[0], GF_NODE_NAME_MAX, "b0");
	cfg->open_teams = true;
	cfg->seed = 1;
	struct gf_cluster *c = gf_calloc(1, sizeof(*c));
	gf_cluster_init(c);
	struct gf_ctl *ctl;
	struct gf_err e;
	assert_int_equal(gf_ctl_new(cfg, c, NULL, &ctl, &e), 0);
	gf_free(cfg);
	next_seq = 0;
	return ctl;
}

/* A node joins, ready: n GPUs of model, a topology or NULL, MIG. */
static inline int join(struct gf_ctl *ctl, const char *name, int ngpus,
		       const char *model, const struct gf_gpu_topo *t,
		       const struct gf_ctl_node_spec *mig)
{
	struct gf_ctl_node_spec s = { .cpu_milli = 96000,
				      .memory_mib = 786432,
				      .ngpus = ngpus };
	if (mig)
		s = *mig;
	snprintf(s.gpu_model, sizeof(s.gpu_model), "%s", model ? model : "");
	s.topo = t;
	struct gf_err e;
	int i = gf_ctl_node_add(ctl, name, &s, 100, NULL, &e);
	if (i < 0)
		print_message("node %s: %s\n", name, e.msg);
	assert_true(i >= 0);
	assert_int_equal(gf_ctl_node_ready(ctl, i, true, NULL, 100, NULL, &e),
			 0);
	check(ctl);
	return i;
}

/* A job running on node with these GPUs (whole: milli 1000; a share;
 * or a MIG instance at mig_start of its profile on gpus[0]). */
static inline const char *run(struct gf_ctl *ctl, const char *node,
			      const int *gpus, int n, int milli,
			      const char *profile, int mig_start,
			      const char *command)
{
	struct gf_job *j = gf_calloc(1, sizeof(*j));
	j->seq = ++next_seq;
	snprintf(j->id, sizeof(j->id), "j%llu", (unsigned long long)j->seq);
	snprintf(j->spec.team, sizeof(j->spec.team), "default");
	snprintf(j->spec.class_name, sizeof(j->spec.class_name), "pods");
	j->spec.replicas = 1;
	if (profile)
		snprintf(j->spec.mig_profile, sizeof(j->spec.mig_profile), "%s",
			 profile);
	else if (milli < 1000)
		j->spec.gpu_milli = milli;
	else
		j->spec.gpus = n;
	j->spec.command = command ? gf_strdup(command) : NULL;
	j->state = GF_JOB_RUNNING;
	j->submitted_ms = j->started_ms = 50;
	j->attempts = 1;
	j->block = 0;
	j->place = gf_calloc(1, sizeof(*j->place));
	struct gf_job_place *p = j->place;
	snprintf(p->node_name, sizeof(p->node_name), "%s", node);
	p->node = -1;
	p->ngpus = n;
	memcpy(p->gpus, gpus, (size_t)n * sizeof(int));
	p->gpu_milli = profile ? 0 : milli;
	p->mig_start = profile ? mig_start : -1;
	struct gf_err e;
	int rc = gf_ctl_add(ctl, j, &e);
	if (rc)
		print_message("run: %s\n", e.msg);
	assert_int_equal(rc, 0);
	const struct gf_job *got = gf_ctl_job(ctl, j->id);
	assert_int_equal(got->state, GF_JOB_RUNNING);
	check(ctl);
	return got->id;
}

static inline void ask_of(const struct gf_ctl *ctl, const struct gf_k8s_pod *p,
			  struct gf_k8s_ask *a)
{
	struct gf_err e;
	int rc = gf_k8s_ask_of(ctl, p, a, &e);
	if (rc)
		print_message("ask: %s\n", e.msg);
	assert_int_equal(rc, 0);
}

static inline void verdict(const struct gf_ctl *ctl, const struct gf_k8s_ask *a,
			   const char *node, struct gf_k8s_verdict *v)
{
	struct gf_k8s_memo *m = gf_k8s_memo_new(ctl, a, 4);
	gf_k8s_verdict(ctl, gf_ctl_node_find(ctl, node), m, v);
	gf_k8s_memo_free(m);
}

static inline int score(const struct gf_ctl *ctl, const struct gf_k8s_ask *a,
			const char *node)
{
	struct gf_k8s_memo *m = gf_k8s_memo_new(ctl, a, 4);
	int s = gf_k8s_score(ctl, gf_ctl_node_find(ctl, node), m);
	gf_k8s_memo_free(m);
	return s;
}

#endif
