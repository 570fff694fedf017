/*
 * report_html.h - `gpufleet report`: the simulators' JSON read back and
 * drawn as one self-contained HTML page (inline SVG and CSS; no script,
 * nothing fetched).
 *
 * Two kinds of document, told apart by their content:
 *   fill    what `gpufleet simulate fill --json` writes (no "command"
 *           key; "policies" an object by policy name).  Its "curve"
 *           (per arrived-load percent) is drawn when present; a file
 *           from before it had one is drawn from its six points.
 *   replay  what `gpufleet simulate replay --json` writes
 *           ("command": "replay"; "policies" an array, each with its
 *           totals, wait_s and jct_s statistics and a "series" over
 *           time).
 * The page: per fill document, the curves of unallocated GPU % against
 * arrived load (the full range and a zoom from 80 %, one line per
 * policy, as the FGD paper draws them) and the summary table; per replay
 * document, GPU allocation, fragmentation and pending GPU demand over
 * time (one line per policy) and the tables.  Charts carry ids
 * (chart-fill, chart-fill-zoom, chart-alloc, chart-frag, chart-pending;
 * "-2", "-3"... for a second document of a kind) and each line is a
 * <polyline class="curve" data-policy="NAME">.
 */
#ifndef GF_SIM_REPORT_HTML_H
#define GF_SIM_REPORT_HTML_H

#include <stddef.h>
#include <stdint.h>

#include <gpufleet/err.h>

#include "sim/report.h"
#include "util/buf.h"

#define GF_RDOC_NAME_MAX     64	     /* a policy's name, bytes */
#define GF_RDOC_TEXT_MAX     256     /* source, trace, file names */
#define GF_RDOC_POLICIES_MAX 64	     /* policies in one document */
#define GF_RDOC_CURVE_MAX    1000    /* points of a fill curve */
#define GF_RDOC_SERIES_MAX   4000000 /* points of a replay series */

enum gf_rdoc_kind { GF_RDOC_FILL, GF_RDOC_REPLAY };

/* A statistic read back; NAN where the document has null. */
struct gf_rdoc_stat {
	double n, mean, p50, p95, p99, max;
};

struct gf_rdoc_fill_pol {
	char name[GF_RDOC_NAME_MAX];
	double at[GF_REPORT_NPOINTS]; /* unallocated mean at the points */
	double frag100;		      /* frag_ratio mean at 100 %; NAN */
	double failed_mean, arrivals_mean, wall_s;
	size_t n;	 /* curve points */
	double *x, *y;	 /* arrived %, unallocated mean % */
	double *lo, *hi; /* min and max over seeds; NULL when absent */
};

struct gf_rdoc_replay_pol {
	char name[GF_RDOC_NAME_MAX];
	int64_t seed, arrived, refused, started, completed, deleted, failed;
	int64_t running_end, queued_end, preemptions;
	struct gf_rdoc_stat wait, jct;
	double mean_alloc, mean_frag, mean_pending_gpus, gpu_hours, wall_s;
	size_t n; /* series points; the arrays below are one allocation */
	double *t, *alloc, *frag, *pending_gpus, *pending, *running;
};

struct gf_rdoc {
	enum gf_rdoc_kind kind;
	char file[GF_RDOC_TEXT_MAX]; /* as named to the reader */
	char source[GF_RDOC_TEXT_MAX];
	char trace[GF_RDOC_TEXT_MAX]; /* replay */
	char seeds[64];		      /* fill: "42-51" */
	int64_t nodes, gpus, work;    /* work: requests (fill), jobs */
	double tune;		      /* fill; NAN when not scaled */
	double load; /* replay: arrivals x times as dense (--load), 1 when
			the file has none */
	int npol;
	struct gf_rdoc_fill_pol *fill;	   /* kind FILL: npol of them */
	struct gf_rdoc_replay_pol *replay; /* kind REPLAY */
};

/*
 * Read one document of len bytes of text, named file in messages.
 * Returns 0 with *d filled (release with gf_rdoc_release()), or
 * GF_EPARSE / GF_ETOOBIG / GF_EINVAL with e saying which file, which key
 * and what was wrong ("'r.json': key 'policies[0].wait_s.p95': expected
 * a number, found a string"); *d is then empty.
 */
int gf_rdoc_parse(const char *file, const char *text, size_t len,
		  struct gf_rdoc *d, struct gf_err *e) GF_MUST_CHECK;
void gf_rdoc_release(struct gf_rdoc *d);

/* The page for n documents (n >= 1), appended to out.  0, or the
 * buffer's GF_ETOOBIG. */
int gf_report_html(const struct gf_rdoc *docs, int n,
		   struct gf_buf *out) GF_MUST_CHECK;

#endif
