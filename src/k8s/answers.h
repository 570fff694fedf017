/*
 * answers.h - what the extender keeps between its calls: for each pod
 * shape (an ask: its kind, GPUs or share, CPU, memory, topology), the
 * nodes found to fit it, each with the node's state it was found in and
 * its score; and where each name of the last list kube-scheduler sent is in the
 * core.  One filter's work is then the next prioritize's (the same pod,
 * the same shape), and a pod like the last one costs what changed.
 *
 * Invalidation: a node's kept "fits" is given again only while the
 * node's engine state is the one it was computed from: its version
 * (gf_cnode.version, bumped by every allocation, release, held or
 * unhealthy GPU, reshape or topology change: what the engine's own score
 * cache is keyed on) and its flags; else the verdict is computed
 * (gf_k8s_verdict) and kept anew.  Each call (gf_k8s_answers_shape,
 * gf_k8s_answers_all) first reads the cluster's change log
 * (gf_cluster.changed: every version bump and flag change appends the
 * node) from where the shape last read it and drops the stamps of the
 * nodes logged since; past what the log keeps, it checks every stamp
 * against its node's version and flags instead.  A stamp that still
 * says "fits" is then given by gf_k8s_answers_all without reading its
 * node (gf_k8s_answers_verdict and _score check version and flags
 * too).  Ready and not cordoned are in the
 * flags: the core keeps GF_CNODE_CORDONED set exactly while a node is
 * not ready, cordoned or drained (gf_ctl_check verifies it), a node
 * found to fit had it clear, and the same flags say it still has.  A
 * node that does not fit is never kept: it is computed each time, with
 * its reason.  Asks that name GPU models (the node's labels decide) or
 * a MIG profile (the MIG layout decides) are not kept.
 *
 * A kept "fits" also keeps the node's score (gf_k8s_score_of), given
 * again while the fits is (same version and flags) and while the
 * engine's score generation is the one it was computed at
 * (gf_ctl_score_gen: bumped when the typical mix is refreshed from the
 * arrivals, or FGD+'s settings change, which move scores without any
 * node changing); a new generation drops every kept score of the shape
 * at its next call.  So prioritize right after filter of one pod, and
 * the next pod of that shape, score only the nodes that changed.  A
 * name's kept index is used only when the core's name at that index is
 * the same (strcmp), else found by hash; a whole list the same as one
 * of the last two, byte for byte, while no node was added since, reuses
 * that list's indices (gf_k8s_answers_find_args).
 *
 * Not thread-safe: the caller holds the core's lock (the controller's
 * ctl_lock) around every call, and calls gf_k8s_answers_clear when it
 * loads another core (a node's version starts again there).
 */
#ifndef GF_K8S_ANSWERS_H
#define GF_K8S_ANSWERS_H

#include <stdint.h>

#include "k8s/decide.h"

#define GF_K8S_SHAPES 8 /* shapes kept; the least recently used goes */
#define GF_K8S_LISTS  2 /* lists kept (filter's, prioritize's) */

struct gf_k8s_answers;
struct gf_k8s_shape;

struct gf_k8s_answers *gf_k8s_answers_new(void);
void gf_k8s_answers_free(struct gf_k8s_answers *c);
/* Forget everything (another core was loaded). */
void gf_k8s_answers_clear(struct gf_k8s_answers *c);

/* The index in ctl of each of names[0..n) into idx (-1: unknown). */
void gf_k8s_answers_find(struct gf_k8s_answers *c, const struct gf_ctl *ctl,
			 const char *const *names, int n, int *idx);

/* The index in ctl of each of a's names into idx (-1: unknown): a list
 * read in place (a->own) byte for byte one of the last GF_K8S_LISTS
 * such, while the core has as many nodes as then, gives that one's
 * indices whole (names are only added to a core, never renamed or
 * removed: the same names, the same indices); any other, as
 * gf_k8s_answers_find. */
void gf_k8s_answers_find_args(struct gf_k8s_answers *c,
			      const struct gf_ctl *ctl,
			      const struct gf_k8s_args *a, int *idx);

/* The kept verdicts of ask a (made, or the least recently used shape
 * reused), or NULL when a is not kept (models named, MIG, no GPU). */
struct gf_k8s_shape *gf_k8s_answers_shape(struct gf_k8s_answers *c,
					  const struct gf_ctl *ctl,
					  const struct gf_k8s_ask *a);

/* Node i's verdict for the memo's ask (the shape's, or NULL: computed):
 * what gf_k8s_verdict(ctl, i, m, v) gives. */
void gf_k8s_answers_verdict(struct gf_k8s_shape *sh, const struct gf_ctl *ctl,
			    int i, struct gf_k8s_memo *m,
			    struct gf_k8s_verdict *v);

/* Node i's score for the memo's ask, v its verdict just given by
 * gf_k8s_answers_verdict(sh, ctl, i, m, v): what gf_k8s_score_of(ctl, i,
 * m, v) gives, kept in the shape beside the node's "fits". */
int gf_k8s_answers_score(struct gf_k8s_shape *sh, const struct gf_ctl *ctl,
			 int i, struct gf_k8s_memo *m,
			 const struct gf_k8s_verdict *v);

/* For k in [0, n): node idx[k]'s verdict into v[k] (when v is not NULL)
 * and its score into score[k] (when score is not NULL), through the
 * shape sh (or computed when NULL): what gf_k8s_answers_verdict and
 * gf_k8s_answers_score give, one call for kube-scheduler's list. */
void gf_k8s_answers_all(struct gf_k8s_shape *sh, const struct gf_ctl *ctl,
			const int *idx, int n, struct gf_k8s_memo *m,
			struct gf_k8s_verdict *v, int64_t *score);

/* Verdicts given from what was kept, and computed, since new. */
void gf_k8s_answers_counts(const struct gf_k8s_answers *c, uint64_t *hits,
			   uint64_t *misses);

#endif
