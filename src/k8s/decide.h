/*
 * decide.h - the extender's decisions against the scheduling core
 * (include/gpufleet/ctl.h): can a pod be placed on a node now, and why
 * not; how good a node is for it; the fewest of the victims
 * kube-scheduler proposes that make room; the job a bound pod becomes.
 *
 * Everything reads the core and changes nothing a caller can see (the
 * victims search uses the core's scratch and leaves it as it was): the
 * controller calls these with the core's lock held, from its handlers,
 * while only its scheduler thread changes the core.  What a node "can
 * take" is what the engine would do there: free whole GPUs, the best
 * linked free set (gpu_topo.h), shares, free MIG instances of the
 * profile, CPU and memory, not on a node not ready or cordoned, not on
 * an unhealthy GPU.
 *
 * A pod asking for several whole GPUs on a node whose GPU topology is
 * known gets a set linked as well as the node allows for that many (the
 * weakest pair of the best set of that size on the empty node: on an
 * HGX board any four, on a DGX-1V's hybrid cube-mesh an NVLink quad),
 * unless its annotation gpufleet.io/gpu-topology is "any".
 */
#ifndef GF_K8S_DECIDE_H
#define GF_K8S_DECIDE_H

#include <gpufleet/ctl.h>

#include "k8s/k8s.h"

enum gf_k8s_ask_kind {
	GF_K8S_ASK_NONE = 0, /* no GPU: kube-scheduler's decision alone */
	GF_K8S_ASK_WHOLE,
	GF_K8S_ASK_SHARE,
	GF_K8S_ASK_MIG,
};

/* A pod's ask in the core's terms. */
struct gf_k8s_ask {
	enum gf_k8s_ask_kind kind;
	struct gf_req req; /* CPU, memory, GPUs, share, allowed models */
	char profile[GF_MIG_PROFILE_MAX];
	uint32_t models;   /* allowed cluster model ids; 0: any */
	bool constrained;  /* the pod names models (none may be here) */
	bool any_topology; /* no linking required */
	char want[GF_K8S_VALUE_MAX * 2]; /* the models it named, for why */
	char named[GF_K8S_MODELS][GF_K8S_VALUE_MAX]; /* as the pod wrote */
	int nnamed;
};

/*
 * The ask of pod p on this core.  0 (kind NONE for a pod with no GPU
 * ask), or GF_EINVAL with e saying what gpufleet cannot place: more than
 * one kind (whole GPUs, a share, MIG), more than one MIG profile or
 * instance, a share outside 1..1000, more than 16 GPUs.
 */
int gf_k8s_ask_of(const struct gf_ctl *ctl, const struct gf_k8s_pod *p,
		  struct gf_k8s_ask *a, struct gf_err *e) GF_MUST_CHECK;

/* What one call remembers between nodes (nodes alike give the same
 * answers): new per call, for one ask; not shared between threads. */
struct gf_k8s_memo;
struct gf_k8s_memo *gf_k8s_memo_new(const struct gf_ctl *ctl,
				    const struct gf_k8s_ask *a, int nodes);
void gf_k8s_memo_free(struct gf_k8s_memo *m);

/*
 * The verdict for node i (an index of the core, or -1 for a name the
 * core does not know: NEVER) into v: FITS, NO_ROOM (it could once work
 * leaves: FailedNodes) or NEVER (FailedAndUnresolvableNodes: no GPU of
 * an allowed model, fewer GPUs than asked, no instance of the profile,
 * not ready), with a reason a person reads ("gpufleet: 4 free GPUs but
 * no 4 NVLink-connected").
 */
void gf_k8s_verdict(const struct gf_ctl *ctl, int i, struct gf_k8s_memo *m,
		    struct gf_k8s_verdict *v);

/*
 * The node's score for the ask, 0..10 (MaxExtenderPriority): the core's
 * placement policy (FGD by default) as 0..100, averaged for several
 * GPUs on a node with a known topology with how well the chosen set is
 * linked (100: as well as the node allows), then divided by 10 and
 * rounded; for MIG, packing (the fewer instances of the profile left
 * free, the higher).  0 for a node that cannot take it.
 */
int gf_k8s_score(const struct gf_ctl *ctl, int i, struct gf_k8s_memo *m);
/* The same, given node i's verdict v for the memo's ask (gf_k8s_verdict's,
 * or gf_k8s_answers_verdict's). */
int gf_k8s_score_of(const struct gf_ctl *ctl, int i, struct gf_k8s_memo *m,
		    const struct gf_k8s_verdict *v);

/*
 * The fewest of the pods uids[0..n) on node i (by the jobs they are in
 * the core: job_of(arg, uid) gives a job id or NULL for a pod the core
 * does not hold) whose release lets the ask fit there: their positions
 * in out[] (room for n).  The count (0: it fits without one), or
 * GF_ENOTFOUND.  ctl is the core's, held alone by the caller.
 */
int gf_k8s_victims(struct gf_ctl *ctl, int i, struct gf_k8s_memo *m,
		   const char *const *uids, int n,
		   const char *(*job_of)(void *arg, const char *uid), void *arg,
		   int *out) GF_MUST_CHECK;

/*
 * The job a pod bound to node i becomes (a pod is a job): seq, id
 * j<seq>, team the namespace (as a team name: longer ones shortened
 * with a hash), name "ns/pod" (shortened the same way), class `cls`,
 * the ask's kind and size, the node's model when the pod named models,
 * CPU and memory, no runtime limit of its own but the longest a job may
 * have (kube-scheduler's pods end when Kubernetes ends them), and the
 * command "k8s-pod UID NS/NAME" that marks it (gf_k8s_job_uid).  The
 * caller owns the job (gf_job_release, gf_free).
 */
struct gf_job *gf_k8s_job_new(const struct gf_ctl *ctl,
			      const struct gf_k8s_pod *p,
			      const struct gf_k8s_ask *a, int i, uint64_t seq,
			      const char *cls, int64_t now_ms);

/*
 * Filter's answer cut to the best: of v[0..n) that fit, all but the
 * `best` highest score[] are marked GF_K8S_BEHIND (ties: the earlier in
 * the list stays), so that kube-scheduler's prioritize gets only those.
 * One pass keeping the best in a sorted array of `best` (best <= 0:
 * nothing changes).
 */
void gf_k8s_keep_best(struct gf_k8s_verdict *v, const int64_t *score, int n,
		      int best);

/* The pod uid of a job made by gf_k8s_job_new into out, or false for
 * another job. */
bool gf_k8s_job_uid(const struct gf_job *j, char *out, size_t size);

#endif
