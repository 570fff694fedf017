/*
 * pool.c - parallel fill runs.  Workers take the next job from an atomic
 * counter and publish its phase and counts in atomics, which a progress
 * reporter (progress.c) reads; the calling thread joins them.
 */
#include "sim/pool.h"

#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim/progress.h"
#include "util/clock.h"
#include "util/log.h"

void gf_fill_jobs_reference(struct gf_fill_job *jobs, int nseeds)
{
	memset(jobs, 0,
	       sizeof(*jobs) * (size_t)GF_POLICY_COUNT * (size_t)nseeds);
	for (int p = 0; p < GF_POLICY_COUNT; p++)
		for (int s = 0; s < nseeds; s++) {
			struct gf_fill_opts *o = &jobs[p * nseeds + s].o;
			o->policy = (enum gf_policy)p;
			o->seed = 42 + (uint64_t)s;
			o->tune = 1.3;
			o->resample = true;
		}
}

static void on_progress(enum gf_fill_phase phase, int done, int total,
			void *arg)
{
	struct gf_fill_job *j = arg;
	int state = phase == GF_FILL_DRAW ? GF_JOB_DRAWING : GF_JOB_PLACING;
	if (phase == GF_FILL_PLACE && atomic_load(&j->state) != GF_JOB_PLACING)
		j->draw_s = gf_clock_s() - j->t0;
	/* counts first: a reader that sees the new state sees them */
	atomic_store(&j->done, done);
	atomic_store(&j->total, total);
	atomic_store(&j->state, state);
}

static void *worker(void *arg)
{
	struct gf_fill_pool *p = arg;
	for (;;) {
		int i = atomic_fetch_add(&p->next, 1);
		if (i >= p->njobs)
			break;
		struct gf_fill_job *j = &p->jobs[i];
		j->t0 = gf_clock_s();
		atomic_store(&j->state, GF_JOB_DRAWING);
		j->rc = gf_fill_run(p->c, p->w, p->typ, p->ntyp, &j->o, &j->res,
				    on_progress, j);
		j->wall_s = gf_clock_s() - j->t0;
		gf_log(GF_LOG_DEBUG, "sim",
		       "run policy=%s seed=%llu: rc=%d, %d arrivals drawn in "
		       "%.3f s, placed in %.3f s (%d failed)",
		       gf_policy_name(j->o.policy),
		       (unsigned long long)j->o.seed, j->rc, j->res.arrivals,
		       j->draw_s, j->wall_s - j->draw_s, j->res.failed);
		atomic_store(&j->done, j->res.arrivals);
		atomic_store(&j->total, j->res.arrivals);
		atomic_store(&j->state, GF_JOB_DONE);
		atomic_fetch_add(&p->finished, 1);
	}
	return NULL;
}

int gf_fill_pool_run(struct gf_fill_pool *p, int threads,
		     struct gf_progress *prog)
{
	pthread_t tid[64];
	if (threads <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		threads = n > 0 ? (int)n : 1;
	}
	if (threads > 64)
		threads = 64;
	if (threads > p->njobs)
		threads = p->njobs;
	atomic_store(&p->next, 0);
	atomic_store(&p->finished, 0);
	for (int i = 0; i < p->njobs; i++) {
		atomic_store(&p->jobs[i].state, GF_JOB_WAITING);
		atomic_store(&p->jobs[i].done, 0);
		atomic_store(&p->jobs[i].total, 0);
	}
	if (prog)
		gf_progress_pool(prog, p);
	double t0 = gf_clock_s();
	int started = 0;
	for (int i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, worker, p) == 0)
			started++;
	if (started == 0)
		worker(p); /* no thread to be had: run here */
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	if (prog)
		gf_progress_pool(prog, NULL);
	gf_log(GF_LOG_DEBUG, "sim", "%d runs on %d threads in %.3f s", p->njobs,
	       started > 0 ? started : 1, gf_clock_s() - t0);
	for (int i = 0; i < p->njobs; i++)
		if (p->jobs[i].rc)
			return -1;
	return 0;
}
