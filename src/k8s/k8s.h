/*
 * k8s.h - Kubernetes as the scheduler extender meets it: a pod's GPU
 * asks read the way kube-scheduler reads resources, and the extender
 * protocol's wire types (k8s.io/kube-scheduler/extender/v1) read from
 * and written to JSON exactly as kube-scheduler sends and decodes them.
 * The decisions over the scheduling core are in k8s/decide.h, the API
 * server client in k8s/api.h; docs/kubernetes.md has the whole design.
 *
 * The wire types' JSON keys are Go field names, capitalised, with no
 * omitempty: every key is always written, nil pointers, slices and maps
 * as null.  Reading takes the keys as Go's encoding writes them (exact
 * case) and ignores keys it does not know; the embedded Pod and Node
 * objects are ordinary API JSON (metadata, spec, ...), of which only what
 * the decisions need is read.  Quantities are JSON strings ("2",
 * "500m", "1Gi").
 *
 * Everything here is pure: no I/O.  Strings a reader returns as `const
 * char *` are borrowed from the parsed document (valid until it is
 * freed); fixed arrays are copies.
 */
#ifndef GF_K8S_K8S_H
#define GF_K8S_K8S_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/err.h>
#include <gpufleet/job.h>

#include "util/json.h"

/* Resources, labels and annotations read and written. */
#define GF_K8S_RES_GPU	 "nvidia.com/gpu"
#define GF_K8S_RES_MIG	 "nvidia.com/mig-" /* + profile: mixed strategy */
#define GF_K8S_RES_MILLI "gpufleet.io/gpu-milli"
#define GF_K8S_LABEL_PRODUCT \
	"nvidia.com/gpu.product"		    /* GPU feature discovery */
#define GF_K8S_ANN_MODEL    "gpufleet.io/gpu-model" /* models, comma list */
#define GF_K8S_ANN_TOPOLOGY "gpufleet.io/gpu-topology" /* "any": no linking */
#define GF_K8S_ANN_GPUS	    "gpufleet.io/gpus"	       /* indexes */
#define GF_K8S_ANN_UUIDS    "gpufleet.io/gpu-uuids"
#define GF_K8S_ANN_MIG	    "gpufleet.io/mig-instance"
#define GF_K8S_ANN_SHARE    "gpufleet.io/gpu-milli"
#define GF_K8S_ANN_NODE	    "gpufleet.io/node"
#define GF_K8S_ANN_JOB	    "gpufleet.io/job"

#define GF_K8S_NAME_MAX	 254 /* a pod or node name: a DNS subdomain */
#define GF_K8S_NS_MAX	 64  /* a namespace: a DNS label */
#define GF_K8S_UID_MAX	 64
#define GF_K8S_VALUE_MAX 64	    /* a GPU model or product named by a pod */
#define GF_K8S_MODELS	 8	    /* models one pod may accept */
#define GF_K8S_BODY_MAX	 (8u << 20) /* an extender call's body */
#define GF_K8S_NAMES_MAX 100000	    /* node names in one call */

/*
 * A pod as the extender needs it.  The GPU asks are per pod, summed over
 * its containers the way kube-scheduler computes a pod's requests
 * (k8s.io/component-helpers/resource.PodRequests): the sum over
 * containers, plus restartable (sidecar) init containers, at least the
 * largest init container (with the sidecars started before it), plus
 * spec.overhead; a container's request for a resource is its limit when
 * it gives no request (as the API server defaults it).
 */
struct gf_k8s_pod {
	char name[GF_K8S_NAME_MAX];
	char ns[GF_K8S_NS_MAX];
	char uid[GF_K8S_UID_MAX];
	char node_name[GF_K8S_NAME_MAX]; /* spec.nodeName, "" unbound */
	char phase[16];			 /* status.phase, "" unknown */
	bool managed;	   /* names one of our resources (requests or
			      limits, any container): kube-scheduler's
			      IsInterested for our managedResources */
	int64_t gpus;	   /* nvidia.com/gpu */
	int64_t gpu_milli; /* gpufleet.io/gpu-milli */
	int nmig;	   /* distinct nvidia.com/mig-* resources asked */
	char mig_profile[GF_MIG_PROFILE_MAX]; /* the first of them */
	int64_t mig_count;		      /* its count */
	int64_t cpu_milli;
	int64_t memory_mib; /* rounded up */
	/* the GPU models it accepts: the values of nvidia.com/gpu.product
	 * in spec.nodeSelector, or in every term of its required node
	 * affinity (operator In), or our annotation's list; none: any */
	char models[GF_K8S_MODELS][GF_K8S_VALUE_MAX];
	int nmodels;
	bool any_topology; /* annotation gpufleet.io/gpu-topology: any */
};

/*
 * Read a Pod object.  0, or GF_EINVAL with e naming the field ("pod
 * ml/train-0: container trainer: 'nvidia.com/gpu': expected a whole
 * number, got \"0.5\""): not an object, a name or uid missing or too
 * long, a quantity that is not one, an extended resource that is not a
 * whole number, more models than GF_K8S_MODELS.
 */
int gf_k8s_pod_read(const struct gf_jv *pod, struct gf_k8s_pod *p,
		    struct gf_err *e) GF_MUST_CHECK;

/* Normalised GPU product: lower case, spaces and '_' as '-', without a
 * trailing "-MIG-..." or "-SHARED" (what GFD appends): "NVIDIA H100
 * 80GB HBM3" and "NVIDIA-H100-80GB-HBM3" both give
 * "nvidia-h100-80gb-hbm3". */
void gf_k8s_product_norm(const char *in, char *out, size_t size);

/* ---- the wire types -------------------------------------------------- */

/* ExtenderArgs: the filter and prioritize request. */
struct gf_k8s_args {
	const struct gf_jv *pod; /* "Pod" (an object) */
	/* the candidates: "NodeNames" (nodeCacheCapable), or the names of
	 * "Nodes".items (node_objects); owned array, borrowed strings */
	const char **names;
	int n;
	bool node_objects;
	const struct gf_jv **nodes; /* with node_objects: each item */
	char *own;	/* the names' bytes when gf_k8s_args_parse read them */
	size_t own_len; /* the array's text in own: its '[' to its ']' (the
			   names' closing quotes NULs), more than the names'
			   bytes summed */
	uint32_t *len;	/* with own: each name's bytes (all plain) */
};

/* 0, or GF_EINVAL naming the key ("'NodeNames'[3]: expected a string");
 * GF_ETOOBIG past GF_K8S_NAMES_MAX names.  Both "Nodes" and "NodeNames"
 * null (or absent) is an empty list. */
int gf_k8s_args_read(const struct gf_jv *v, struct gf_k8s_args *a,
		     struct gf_err *e) GF_MUST_CHECK;
void gf_k8s_args_release(struct gf_k8s_args *a);

/*
 * ExtenderArgs from its text s (len bytes): what gf_jv_parse() then
 * gf_k8s_args_read() give, same tree, names, codes and messages, read
 * faster in kube-scheduler's usual case.  A "NodeNames" array of plain
 * names (printable ASCII, no escapes) is read here, in place, and
 * jansson parses the rest with "[]" in its place (one allocation per
 * call, not two per name); any other text is parsed as it is.  Returns
 * 0, or gf_jv_parse's GF_EPARSE / GF_ETOOBIG (*root NULL, e as the
 * parse of s says), or gf_k8s_args_read's error (*root set).  The caller
 * frees *root (gf_jv_free) and releases a in every case.
 */
int gf_k8s_args_parse(const char *s, size_t len, struct gf_jv **root,
		      struct gf_k8s_args *a, struct gf_err *e) GF_MUST_CHECK;

/* ExtenderBindingArgs. */
struct gf_k8s_bind_args {
	char pod[GF_K8S_NAME_MAX];
	char ns[GF_K8S_NS_MAX];
	char uid[GF_K8S_UID_MAX];
	char node[GF_K8S_NAME_MAX];
};
int gf_k8s_bind_args_read(const struct gf_jv *v, struct gf_k8s_bind_args *a,
			  struct gf_err *e) GF_MUST_CHECK;

/* One node's victims (Victims or MetaVictims). */
struct gf_k8s_victims {
	const char *node;
	const char **uids; /* owned array, borrowed strings */
	int n;
	int64_t pdb; /* NumPDBViolations */
};

/* ExtenderPreemptionArgs: NodeNameToMetaVictims (nodeCacheCapable) or
 * NodeNameToVictims (the pods' metadata.uid read). */
struct gf_k8s_preempt_args {
	const struct gf_jv *pod;
	struct gf_k8s_victims *v; /* owned */
	int n;
};
int gf_k8s_preempt_args_read(const struct gf_jv *v,
			     struct gf_k8s_preempt_args *a,
			     struct gf_err *e) GF_MUST_CHECK;
void gf_k8s_preempt_args_release(struct gf_k8s_preempt_args *a);

/* A filter verdict per candidate. */
enum gf_k8s_kind {
	GF_K8S_FITS = 0,
	GF_K8S_NO_ROOM, /* FailedNodes: preemption may help */
	GF_K8S_NEVER,	/* FailedAndUnresolvableNodes */
	GF_K8S_BEHIND,	/* fits, but as many as filter answers fit better:
			   in neither NodeNames nor the failed maps */
};
#define GF_K8S_WHY_MAX 160
struct gf_k8s_verdict {
	enum gf_k8s_kind kind;
	char why[GF_K8S_WHY_MAX];
};

/*
 * ExtenderFilterResult for a's candidates and their verdicts v[0..a->n)
 * (NULL: every candidate passes), or with error set (not NULL, not "")
 * the Error reply.  The passing candidates go back in the form they came
 * in: NodeNames (Nodes null), or Nodes.items (NodeNames null), never
 * both null; an Error reply has NodeNames [] (or Nodes with no items).
 */
void gf_k8s_filter_write(struct gf_json *j, const struct gf_k8s_args *a,
			 const struct gf_k8s_verdict *v, const char *error);

/* HostPriorityList: a bare array of {Host, Score} for a's candidates. */
void gf_k8s_priorities_write(struct gf_json *j, const struct gf_k8s_args *a,
			     const int64_t *score);

/* ExtenderBindingResult: {"Error": error or ""}. */
void gf_k8s_bind_result_write(struct gf_json *j, const char *error);

/* ExtenderPreemptionResult: NodeNameToMetaVictims with, for each of a's
 * nodes whose keep[k] >= 0, the victims uids[pick[k][0..keep[k])]. */
void gf_k8s_preempt_write(struct gf_json *j,
			  const struct gf_k8s_preempt_args *a, const int *keep,
			  int *const *pick);

/* Any parsed JSON value written back (a node object echoed). */
void gf_k8s_jv_write(struct gf_json *j, const char *key, const struct gf_jv *v);

#endif
