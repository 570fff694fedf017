/*
 * manifest_impl.h - what the readers of an autoscaling manifest share:
 * the HorizontalPodAutoscaler's (manifest.c, which also reads the root
 * and dispatches) and KEDA's ScaledObject (manifest_keda.c, whose
 * advanced.horizontalPodAutoscalerConfig.behavior is the HPA's).  Only
 * those two files include it.
 */
#ifndef GF_AUTOSCALE_MANIFEST_IMPL_H
#define GF_AUTOSCALE_MANIFEST_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "autoscale/autoscale.h"
#include "util/yaml.h"

typedef struct gf_yn node_t;

struct rd {
	struct gf_yr yr; /* the document and the error */
	struct gf_as_scaler *out;
};

#define fail(r, n, ...) gf_yr_fail(&(r)->yr, n, __VA_ARGS__)

/* A warning in out->warn (the first 8 kept, all counted). */
__attribute__((format(printf, 3, 4))) void
gf__as_warn(const struct rd *r, const node_t *n, const char *fmt, ...);

/*
 * One field of a mapping; k is its key node.  0, an error, or FIELD_UNKNOWN
 * for a key fn does not know (warned about, as the API server does).
 */
#define FIELD_UNKNOWN 1
typedef int (*field_fn)(const struct rd *r, const char *key, const node_t *k,
			const node_t *v, void *obj);

/* A spec being read: which of its required fields were seen. */
struct spec_ctx {
	struct gf_as_scaler *out;
	bool max, metrics, trigger;
};

/* Each pair of mapping n whose value is not null, handed to fn. */
int gf__as_walk(const struct rd *r, const node_t *n, const char *what,
		field_fn fn, void *obj) GF_MUST_CHECK;
/* An int32 field. */
int gf__as_get_int(const struct rd *r, const node_t *n, const char *what,
		   int32_t *out) GF_MUST_CHECK;
/* s is one of names (a NULL-terminated list): its index, else -1. */
int gf__as_one_of(const char *s, const char *const *names);
/* An HPA's spec.behavior into s (s->behavior set). */
int gf__as_parse_behavior(const struct rd *r, const node_t *n,
			  struct gf_hpa_spec *s) GF_MUST_CHECK;

/* KEDA (manifest_keda.c): a ScaledObject's spec, and its metadata's
 * annotations (autoscaling.keda.sh/paused, paused-replicas). */
int gf__as_parse_keda_spec(const struct rd *r, const node_t *n,
			   struct gf_as_scaler *out) GF_MUST_CHECK;
int gf__as_parse_annotations(const struct rd *r, const node_t *md,
			     struct gf_as_scaler *out) GF_MUST_CHECK;

#endif
