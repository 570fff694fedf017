/*
 * service_impl.h - internal: the controller service's state, shared by
 * service.c (the scheduler thread), api.c (the handlers) and metrics.c.
 *
 * Locks, in the only order they are ever taken: qlock (the request
 * queue), then ctl_lock (the core, `leading`, the figures).  The
 * scheduler thread takes qlock only to move the queue out, and holds
 * ctl_lock while it changes the core, never while it writes the store.
 */
#ifndef GF_CONTROLLER_SERVICE_IMPL_H
#define GF_CONTROLLER_SERVICE_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <gpufleet/ctl.h>

#include "controller/service.h"
#include "server/server.h"
#include "store/store.h"

/* Submit-to-placed latency buckets, seconds (Prometheus histogram). */
#define GF_SERVE_LAT_BUCKETS 12

enum gf_op_kind { GF_OP_SUBMIT, GF_OP_CANCEL };

/* A request handed to the scheduler thread, and its answer. */
struct gf_op {
	enum gf_op_kind kind;
	struct gf_job_spec spec; /* SUBMIT: owned until the thread takes it */
	char id[GF_JOB_ID_MAX];	 /* CANCEL */
	const struct gf_auth_entry *who; /* NULL: no tokens */
	/* the answer, set by the scheduler thread */
	bool done;
	unsigned status;
	char error[32];
	char detail[GF_ERR_MSG_MAX];
	char job_id[GF_JOB_ID_MAX];
	enum gf_job_state state;
	struct gf_op *next;
};

struct gf_service {
	struct gf_service_opts o;
	struct gf_ctl *ctl;
	struct gf_store *store;
	struct gf_server *srv;
	pthread_t tid;
	bool running;

	pthread_mutex_t qlock;
	pthread_cond_t qwake; /* work queued, or stop */
	pthread_cond_t qdone; /* answers given */
	struct gf_op *head, *tail;
	bool stop;

	pthread_mutex_t ctl_lock;
	bool leading; /* the core holds the store's state */
	uint64_t seq; /* the last job number given */
	int64_t last_lead_ms;
	/* figures for /metrics (under ctl_lock) */
	uint64_t lat_count[GF_SERVE_LAT_BUCKETS + 1];
	double lat_sum;
	uint64_t submitted, rejected, cancelled, write_batches;

	atomic_int failed;
	char fail_msg[GF_ERR_MSG_MAX];
	pthread_cond_t failed_cond; /* under qlock */
};

/* The bucket bounds, seconds. */
extern const double gf_serve_lat_bounds[GF_SERVE_LAT_BUCKETS];

/* Queue op and wait for its answer (0), or GF_ECONFLICT when the service
 * is stopping. */
int gf__service_call(struct gf_service *s, struct gf_op *op);

/* /metrics into b (under ctl_lock). */
void gf__service_metrics(struct gf_service *s, struct gf_buf *b);

/* ms since the epoch, now. */
int64_t gf__service_now_ms(void);

#endif
