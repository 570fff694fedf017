/*
 * progress.c - the reporter thread behind the progress line.  It sleeps on
 * a condition variable (so gf_progress_stop() never waits for a tick),
 * and reads the pool's per-job atomics under the lock that
 * gf_progress_pool() takes, so a detached pool is never read again.
 */
#include "sim/progress.h"

#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"

void gf_progress_init(struct gf_progress *p, const char *prefix, FILE *out)
{
	memset(p, 0, sizeof(*p));
	p->prefix = prefix;
	p->out = out;
	p->tty = isatty(fileno(out)) == 1;
	p->delay_s = 1.0;
	p->every_s = p->tty ? 0.5 : 10.0;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->wake, &ca);
	pthread_condattr_destroy(&ca);
	p->t0 = gf_clock_s();
}

/* Called with the lock held. */
static int format_locked(struct gf_progress *p, char *buf, size_t size)
{
	double t = gf_clock_s() - p->t0;
	struct gf_fill_pool *pool = p->pool;
	if (pool == NULL)
		return snprintf(buf, size, "%s: %s, %.1f s", p->prefix,
				p->step[0] ? p->step : "starting", t);
	int finished = 0, ndraw = 0, nplace = 0;
	long draw_done = 0, draw_total = 0, place_done = 0, place_total = 0;
	for (int i = 0; i < pool->njobs; i++) {
		struct gf_fill_job *j = &pool->jobs[i];
		int state = atomic_load(&j->state);
		long done = atomic_load(&j->done),
		     total = atomic_load(&j->total);
		if (state == GF_JOB_DONE) {
			finished++;
		} else if (state == GF_JOB_DRAWING) {
			ndraw++;
			draw_done += done;
			draw_total += total;
		} else if (state == GF_JOB_PLACING) {
			nplace++;
			place_done += done;
			place_total += total;
		}
	}
	int len = snprintf(buf, size, "%s: %d/%d runs done", p->prefix,
			   finished, pool->njobs);
	if (ndraw && len >= 0 && (size_t)len < size)
		len += snprintf(buf + len, size - (size_t)len,
				", %d drawing arrivals (%ld %%)", ndraw,
				draw_total > 0 ? 100 * draw_done / draw_total
					       : 0);
	if (nplace && len >= 0 && (size_t)len < size)
		len += snprintf(buf + len, size - (size_t)len,
				", %d placing (%ld/%ld arrivals)", nplace,
				place_done, place_total);
	if (len >= 0 && (size_t)len < size)
		len += snprintf(buf + len, size - (size_t)len, ", %.1f s", t);
	return len;
}

int gf_progress_format(struct gf_progress *p, char *buf, size_t size)
{
	pthread_mutex_lock(&p->lock);
	int len = format_locked(p, buf, size);
	pthread_mutex_unlock(&p->lock);
	if (len < 0)
		len = 0;
	return size > 0 && (size_t)len >= size ? (int)size - 1 : len;
}

static void draw(struct gf_progress *p, bool end)
{
	char line[512];
	int len = format_locked(p, line, sizeof(line));
	if (len < 0)
		return;
	if (len >= (int)sizeof(line))
		len = (int)sizeof(line) - 1;
	if (p->tty) /* blank what a longer line left behind */
		fprintf(p->out, "\r%s%*s%s", line,
			p->last_len > len ? p->last_len - len : 0, "",
			end ? "\n" : "");
	else
		fprintf(p->out, "%s\n", line);
	fflush(p->out);
	p->last_len = len;
	p->shown = true;
}

static void *reporter(void *arg)
{
	struct gf_progress *p = arg;
	double next = p->t0 + p->delay_s;
	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		double t = gf_clock_s();
		if (t >= next) {
			draw(p, false);
			next = t + p->every_s;
			continue;
		}
		struct timespec ts;
		gf_clock_deadline(&ts, (next - t) * 1e3);
		pthread_cond_timedwait(&p->wake, &p->lock, &ts);
	}
	if (p->shown && p->tty)
		draw(p, true);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int gf_progress_start(struct gf_progress *p)
{
	int rc = pthread_create(&p->tid, NULL, reporter, p);
	if (rc != 0)
		return -rc;
	p->running = true;
	return 0;
}

void gf_progress_step(struct gf_progress *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&p->lock);
	vsnprintf(p->step, sizeof(p->step), fmt, ap);
	pthread_mutex_unlock(&p->lock);
	va_end(ap);
}

void gf_progress_pool(struct gf_progress *p, struct gf_fill_pool *pool)
{
	pthread_mutex_lock(&p->lock);
	p->pool = pool;
	pthread_mutex_unlock(&p->lock);
}

void gf_progress_stop(struct gf_progress *p)
{
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	if (p->running)
		pthread_join(p->tid, NULL);
	p->running = false;
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
}
