/*
 * k8s.h - the Kubernetes scheduler extender of `gpufleet serve
 * --k8s-extender`: its options.  The routes (POST /k8s/filter,
 * /k8s/prioritize, /k8s/preempt, /k8s/bind) and what they decide are in
 * k8s_impl.h and docs/kubernetes.md.
 */
#ifndef GF_CONTROLLER_K8S_H
#define GF_CONTROLLER_K8S_H

#include <stdbool.h>

#define GF_K8S_WORKERS	       4     /* threads calling the API server */
#define GF_K8S_RESYNC_MS       30000 /* pod-list resync period */
#define GF_K8S_POD_CACHE       4096  /* pods remembered from filter for bind */
#define GF_K8S_FILTER_BEST     16    /* filter answers the best this many */
#define GF_K8S_FILTER_BEST_MAX 5000

struct gf_k8s_opts {
	/* the API server: a kubeconfig (NULL: in-cluster config when
	 * KUBERNETES_SERVICE_HOST is set, else none: bind answers an
	 * Error), its context (NULL: current), or a plain URL with no
	 * credentials (kubectl proxy; tests) */
	const char *kubeconfig;
	const char *context;
	const char *api_url;
	const char *cls; /* the class of pods' jobs; NULL: the highest
			    priority class that is not preemptible */
	long resync_ms;	 /* 0: GF_K8S_RESYNC_MS; < 0: never */
	/* filter's NodeNames: the best this many of the nodes that fit,
	 * by prioritize's score (0: GF_K8S_FILTER_BEST; < 0: every one) */
	long filter_best;
	unsigned workers; /* 0: GF_K8S_WORKERS */
};

#endif
