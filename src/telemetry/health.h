/*
 * health.h - whether each GPU of a node should get new work, from what
 * NVML says about it: Xid events, the GPU falling off the bus, the GPU
 * answering again.  Pure: no I/O and no clock; every call takes the time
 * (ms, the caller's wall clock) it happens at.
 *
 * Each Xid code has a class (gf_xid_class(), the table in health.c, from
 * NVIDIA's Xid catalog):
 *   GF_XID_RESET      the GPU needs a reset: unhealthy until it has one.
 *                     NVML has no "GPU was reset" event, so in practice
 *                     until the agent restarts (a new machine starts
 *                     every GPU healthy: NVML delivers only the events
 *                     after it registered), or a GPU that was lost
 *                     answers again (it cannot without a reset);
 *   GF_XID_TRANSIENT  unhealthy, healthy again once `quiet_ms` passed
 *                     without another Xid on that GPU (each new one
 *                     restarts the quiet period); unknown codes too;
 *   GF_XID_APP        an application's own error that says nothing
 *                     about the GPU (the codes NVIDIA's device plugin
 *                     skips): counted, no change of health.
 * A GPU whose calls answer GPU_IS_LOST is unhealthy ("fell off the
 * bus"), as after Xid 79; when it answers again it has been reset (or
 * re-attached): its reset-class Xids are forgotten and a quiet period
 * starts, so a GPU that flaps on the bus gets no work while it flaps.
 *
 * States of a GPU (gf_health_state(), the first that holds: LOST, RESET,
 * RECOVERING, OK); healthy exactly in OK:
 *
 *                 transient Xid
 *        +----------------------------+
 *        |                            v
 *       OK <-- quiet passed [tick] -- RECOVERING ---+ transient Xid:
 *        |                            |   ^    ^----+ quiet restarts
 *        | reset-class Xid            |   |
 *        v                            |   | answers again [back]
 *      RESET <------------------------+   |
 *      (until the agent restarts)        LOST <-- GPU_IS_LOST [lost],
 *                                                 from any state
 *
 *   FROM -> TO                  [function]
 *   any -> LOST                 [gf_health_lost]
 *   LOST -> RECOVERING          [gf_health_back]: reset-class Xids
 *                               cleared, a quiet period from then
 *   OK, RECOVERING -> RESET     [gf_health_xid, reset class]
 *   OK -> RECOVERING            [gf_health_xid, transient]
 *   RECOVERING -> RECOVERING    [gf_health_xid, transient]: the quiet
 *                               period restarts
 *   RECOVERING -> OK            [gf_health_tick, now >= healthy_at]
 *   any -> same                 [gf_health_xid, application]: counted
 *
 * Invariants (gf_health_check): a reset cause is a reset-class code, a
 * quiet period's a transient one (or the GPU answering again); the
 * per-class counts add up to the Xids seen.  A clock that went back (healthy_at
 * more than a quiet period ahead of a tick) is taken as now: a GPU stays
 * unhealthy at most one quiet period after the clock steps back.
 *
 * Not thread-safe: one owner (the agent's sampler) feeds and reads it.
 */
#ifndef GF_TELEMETRY_HEALTH_H
#define GF_TELEMETRY_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gpufleet/err.h>

#define GF_HEALTH_MAX_GPUS   64	    /* GPUs per node, as the collector */
#define GF_HEALTH_QUIET_MS   300000 /* default quiet period: 300 s */
#define GF_HEALTH_REASON_MAX 128    /* a reason's text, with its NUL */
#define GF_XID_CODES                           \
	256 /* the table's size; codes past it \
	       are unknown (transient) */

enum gf_xid_class {
	GF_XID_TRANSIENT = 0,
	GF_XID_RESET,
	GF_XID_APP,
	GF_XID_NCLASS
};

/* The class of an Xid code (unknown codes: GF_XID_TRANSIENT). */
enum gf_xid_class gf_xid_class(unsigned code);

/* A one-line meaning of an Xid code ("fell off the bus"); "unknown Xid"
 * for codes the table lacks.  Static. */
const char *gf_xid_meaning(unsigned code);

/* "transient", "reset" or "application" (the metric's class label). */
const char *gf_xid_class_name(enum gf_xid_class c);

enum gf_health_state {
	GF_HEALTH_OK = 0,
	GF_HEALTH_RECOVERING, /* a transient cause, until healthy_at */
	GF_HEALTH_RESET,      /* a reset-class Xid */
	GF_HEALTH_LOST,	      /* the GPU's calls answer GPU_IS_LOST */
};

/* Why a healthy GPU's reason reads as it does. */
enum gf_health_note {
	GF_NOTE_NONE = 0,
	GF_NOTE_APP,	   /* the last event was an application Xid */
	GF_NOTE_RECOVERED, /* it recovered from a transient cause */
};

/* One GPU's record (read it through the functions below). */
struct gf_health_gpu {
	int64_t since_ms; /* healthy, or unhealthy, since */
	unsigned last_xid;
	uint64_t xids, by_class[GF_XID_NCLASS];
	bool lost;
	int64_t lost_ms;
	unsigned reset_xid; /* 0: none; else the first reset-class Xid */
	int64_t reset_ms;
	bool recovering;
	unsigned rec_xid; /* 0: it answered again after being lost */
	int64_t rec_ms, healthy_at_ms;
	enum gf_health_note note;
	unsigned note_xid;
	int64_t note_ms;
};

struct gf_health {
	int n;		  /* GPUs */
	int64_t quiet_ms; /* may be changed between calls */
	struct gf_health_gpu g[GF_HEALTH_MAX_GPUS];
};

/*
 * Every one of n GPUs healthy since now_ms, with a quiet period of
 * quiet_ms (0: GF_HEALTH_QUIET_MS).  0, GF_ETOOBIG for more than
 * GF_HEALTH_MAX_GPUS, GF_EINVAL for n < 0 or quiet_ms < 0 (h is then
 * left with no GPU and the default quiet period).
 */
int gf_health_init(struct gf_health *h, int n, int64_t quiet_ms,
		   int64_t now_ms) GF_MUST_CHECK;

/*
 * Events of GPU `gpu` (0 .. n-1) at at_ms.  Each returns 0, or GF_EINVAL
 * for a GPU out of range (nothing changes).  gf_health_back of a GPU
 * that is not lost changes nothing.
 */
int gf_health_xid(struct gf_health *h, int gpu, unsigned code, int64_t at_ms);
int gf_health_lost(struct gf_health *h, int gpu, int64_t at_ms);
int gf_health_back(struct gf_health *h, int gpu, int64_t at_ms);

/* Recover every GPU whose quiet period ended by now_ms. */
void gf_health_tick(struct gf_health *h, int64_t now_ms);

/* GPU gpu's state; out of range: GF_HEALTH_LOST (never healthy). */
enum gf_health_state gf_health_state(const struct gf_health *h, int gpu);
bool gf_health_is_healthy(const struct gf_health *h, int gpu);

/*
 * Why, in one line, into out (at most size bytes with the NUL; an empty
 * string for a GPU that never had an event):
 *   "xid 79: fell off the bus (needs a GPU reset)"
 *   "fell off the bus (NVML: GPU is lost)"
 *   "recovering: xid 8 at 2025-01-01T10:00:00Z, healthy again at
 *    2025-01-01T10:05:00Z"
 *   "recovering: answering again at ..., healthy again at ..."
 *   "xid 31: GPU memory page fault (application error; the GPU stays
 *    healthy)"
 *   "recovered: xid 8 at ..., healthy again at ..."
 * Times are UTC, to the second.  Returns out.
 */
char *gf_health_reason(const struct gf_health *h, int gpu, char *out,
		       size_t size);

/* GPU gpu's record (NULL out of range); borrowed, valid until the next
 * call that changes h. */
const struct gf_health_gpu *gf_health_gpu(const struct gf_health *h, int gpu);

/* The invariants above: 0, or GF_EINVAL with the first breach in msg. */
int gf_health_check(const struct gf_health *h, char *msg,
		    size_t size) GF_MUST_CHECK;

#endif
