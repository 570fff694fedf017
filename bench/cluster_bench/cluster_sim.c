/*
 * cluster_sim.c - cluster_bench's simulated agents: the template every agent
 * registers with, and the client threads that drive them (libcurl multi
 * handles on one epoll a thread; cluster_bench.c says how).
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "cluster_bench/cluster_bench.h"

/* ---- what every agent sends the same ---------------------------------- */

/* The hgx-h100 template as the real agent registers it; each agent's
 * copy differs in its name and GPU UUIDs. */
static struct gf_np_inventory inv_tmpl;
static char *topology; /* topo --json of the template */
static size_t topology_len;

int load_template(void)
{
	struct gf_node *n = gf_node_new();
	struct gf_err e;
	if (gf_template_build(TEMPLATE, n, &e) != 0) {
		printf("# cluster: cannot build template '%s': %s\n", TEMPLATE,
		       e.msg);
		gf_node_free(n);
		return -1;
	}
	struct gf_np_inventory *inv = &inv_tmpl;
	memset(inv, 0, sizeof(*inv));
	gf_np_inventory_room(inv, GF_CNODE_MAX_GPUS, 0);
	snprintf(inv->version, sizeof(inv->version), "cluster_bench");
	inv->cpu_milli = (int32_t)(gf_bitmap_count(&n->cpus) * 1000);
	uint64_t mem = 0;
	for (int i = 0; i < n->nnuma; i++)
		mem += n->numa[i].memory_bytes;
	inv->memory_mib = (int64_t)(mem >> 20);
	for (int g = 0; g < n->ngpus && g < GF_CNODE_MAX_GPUS; g++) {
		inv->gpus[g].index = g;
		snprintf(inv->gpus[g].name, sizeof(inv->gpus[g].name), "%s",
			 n->gpus[g].name);
		inv->gpus[g].memory_mib = (int64_t)n->gpus[g].memory_mib;
		inv->gpus[g].healthy = true;
		inv->ngpus = g + 1;
	}
	if (inv->ngpus && n->gpus[0].model)
		snprintf(inv->gpu_model, sizeof(inv->gpu_model), "%s",
			 n->gpus[0].model->id);
	if (inv->ngpus && gf_gpu_topo_from_node(n, &inv->topo, &e) == 0)
		inv->has_topo = true;
	struct gf_buf b;
	gf_buf_init(&b, 8u << 20);
	if (gf_render_topo_json(n, false, NULL, 0, &b) == 0) {
		topology = gf_strndup(gf_buf_str(&b), b.len);
		topology_len = b.len;
	}
	gf_buf_release(&b);
	gf_node_free(n);
	return 0;
}

void template_free(void)
{
	gf_free(topology);
	topology = NULL;
}

/* ---- the simulated agents ------------------------------------------- */

static void fifo_push(struct fifo *f, struct agent *a, int64_t at)
{
	if (f->n == f->cap) {
		int cap = f->cap ? 2 * f->cap : 64;
		struct agent **na = gf_calloc((size_t)cap, sizeof(*na));
		int64_t *nt = gf_calloc((size_t)cap, sizeof(*nt));
		for (int i = 0; i < f->n; i++) {
			na[i] = f->a[(f->head + i) % f->cap];
			nt[i] = f->at[(f->head + i) % f->cap];
		}
		gf_free(f->a);
		gf_free(f->at);
		f->a = na;
		f->at = nt;
		f->head = 0;
		f->cap = cap;
	}
	int k = (f->head + f->n) % f->cap;
	f->a[k] = a;
	f->at[k] = at;
	f->n++;
}

/* The first agent due by now, or NULL. */
static struct agent *fifo_due(struct fifo *f, int64_t now)
{
	if (f->n == 0 || f->at[f->head] > now)
		return NULL;
	struct agent *a = f->a[f->head];
	f->head = (f->head + 1) % f->cap;
	f->n--;
	return a;
}

static int64_t fifo_next(const struct fifo *f)
{
	return f->n ? f->at[f->head] : INT64_MAX;
}

void fifo_release(struct fifo *f)
{
	gf_free(f->a);
	gf_free(f->at);
}

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct gf_buf *b = arg;
	return gf_buf_append(b, p, size * n) == 0 ? size * n : 0;
}

static bool in_window(int64_t t)
{
	int64_t ws = atomic_load(&R.ws), we = atomic_load(&R.we);
	return ws && t >= ws && (we == 0 || t < we);
}

static void note_err(struct cl *c, const char *what, struct agent *a,
		     CURLcode rc, long status)
{
	c->errs++;
	if (in_window(mono_ns()))
		c->w_err++;
	snprintf(c->last_err, sizeof(c->last_err), "%s %s: %s (HTTP %ld)", what,
		 a->name, rc ? curl_easy_strerror(rc) : "answered", status);
}

static void setup_handle(struct agent *a, CURL *h, struct gf_buf *ans)
{
	curl_easy_setopt(h, CURLOPT_PRIVATE, a);
	curl_easy_setopt(h, CURLOPT_RESOLVE, a->to);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROXY, "");
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, R.hdrs);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, ans);
	curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 4096L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
}

struct agent *agent_new(int id)
{
	struct agent *a = gf_calloc(1, sizeof(*a));
	a->id = id;
	snprintf(a->name, sizeof(a->name), "sim-%05d", id);
	char to[128];
	snprintf(to, sizeof(to), "%s:%u:127.0.0.1", a->name, R.port);
	a->to = curl_slist_append(NULL, to);
	gf_buf_init(&a->body, GF_NP_BODY_MAX);
	gf_buf_init(&a->hb_ans, 1u << 20);
	gf_buf_init(&a->poll_ans, ANSWER_MAX);
	a->hb = curl_easy_init();
	a->poll = curl_easy_init();
	setup_handle(a, a->hb, &a->hb_ans);
	setup_handle(a, a->poll, &a->poll_ans);
	return a;
}

void agent_free(struct agent *a)
{
	if (a->hb_busy)
		curl_multi_remove_handle(a->g->m, a->hb);
	if (a->poll_busy)
		curl_multi_remove_handle(a->g->m, a->poll);
	curl_easy_cleanup(a->hb);
	curl_easy_cleanup(a->poll);
	curl_slist_free_all(a->to);
	gf_buf_release(&a->body);
	gf_buf_release(&a->hb_ans);
	gf_buf_release(&a->poll_ans);
	gf_free(a->run);
	gf_free(a);
}

static void url_of(const struct agent *a, const char *tail, char *out,
		   size_t size)
{
	snprintf(out, size, "http://%s:%u/v1/nodes/%s%s", a->name, R.port,
		 a->name, tail);
}

/* The heartbeat members: GPUs healthy, the assigned replicas running. */
static void heartbeat_of(const struct agent *a, struct gf_np_heartbeat *hb)
{
	memset(hb, 0, sizeof(*hb));
	hb->generation = a->gen;
	for (int g = 0; g < inv_tmpl.ngpus; g++) {
		hb->health[g].index = g;
		hb->health[g].healthy = true;
	}
	hb->nhealth = inv_tmpl.ngpus;
	hb->nrunning = a->nrun;
	hb->running = a->run; /* borrowed: not released */
}

static void send_register(struct cl *c, struct agent *a)
{
	struct gf_np_inventory *inv = gf_malloc(sizeof(*inv));
	*inv = inv_tmpl; /* its own GPUs: the template's are shared */
	inv->gpus = gf_malloc((size_t)inv->ngpus * sizeof(*inv->gpus) + 1);
	memcpy(inv->gpus, inv_tmpl.gpus,
	       (size_t)inv->ngpus * sizeof(*inv->gpus));
	snprintf(inv->address, sizeof(inv->address), "%s", a->name);
	for (int g = 0; g < inv->ngpus; g++)
		snprintf(inv->gpus[g].uuid, sizeof(inv->gpus[g].uuid),
			 "GPU-%08x-%04x-4000-8000-0000c1a57e40",
			 (unsigned)a->id, (unsigned)g);
	struct gf_np_heartbeat hb;
	heartbeat_of(a, &hb);
	struct gf_json j;
	gf_buf_reset(&a->body);
	gf_json_init(&j, &a->body);
	gf_json_obj_begin(&j, NULL);
	gf_np_inventory_write(&j, inv, topology, topology_len);
	gf_np_heartbeat_write(&j, &hb);
	gf_json_obj_end(&j);
	gf_np_inventory_free(inv);
	char url[160];
	url_of(a, "", url, sizeof(url));
	gf_buf_reset(&a->hb_ans);
	curl_easy_setopt(a->hb, CURLOPT_URL, url);
	curl_easy_setopt(a->hb, CURLOPT_POSTFIELDS, a->body.data);
	curl_easy_setopt(a->hb, CURLOPT_POSTFIELDSIZE_LARGE,
			 (curl_off_t)a->body.len);
	curl_easy_setopt(a->hb, CURLOPT_CUSTOMREQUEST, "PUT");
	curl_easy_setopt(a->hb, CURLOPT_TIMEOUT_MS, 60000L);
	a->st = A_REGISTERING;
	a->hb_busy = true;
	a->hb_sent = mono_ns();
	c->reg_busy++;
	curl_multi_add_handle(a->g->m, a->hb);
}

static void send_heartbeat(struct agent *a, int64_t now)
{
	struct gf_np_heartbeat hb;
	heartbeat_of(a, &hb);
	struct gf_json j;
	gf_buf_reset(&a->body);
	gf_json_init(&j, &a->body);
	gf_json_obj_begin(&j, NULL);
	gf_np_heartbeat_write(&j, &hb);
	gf_json_obj_end(&j);
	gf_buf_reset(&a->hb_ans);
	curl_easy_setopt(a->hb, CURLOPT_POSTFIELDS, a->body.data);
	curl_easy_setopt(a->hb, CURLOPT_POSTFIELDSIZE_LARGE,
			 (curl_off_t)a->body.len);
	a->hb_busy = true;
	a->hb_sent = now;
	curl_multi_add_handle(a->g->m, a->hb);
}

/* The assignments after a->gen: a long poll (30 s) with two connections
 * an agent; with one (`agent --one-connection`), a read answered at once,
 * made after the PUT and after a heartbeat whose answer says a newer
 * generation. */
static void send_poll(struct agent *a)
{
	char url[200];
	char tail[64];
	long wait_ms = R.conns == 1 ? 0 : 30000;
	snprintf(tail, sizeof(tail), "/assignments?wait=%ldms&after=%" PRIu64,
		 wait_ms, a->gen);
	url_of(a, tail, url, sizeof(url));
	gf_buf_reset(&a->poll_ans);
	curl_easy_setopt(a->poll, CURLOPT_URL, url);
	curl_easy_setopt(a->poll, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(a->poll, CURLOPT_TIMEOUT_MS, 40000L);
	a->poll_busy = true;
	curl_multi_add_handle(a->g->m, a->poll);
}

/* The generation a heartbeat's answer says, or 0. */
static uint64_t acked_gen(const struct agent *a)
{
	struct gf_jv *v = NULL;
	struct gf_err e;
	int64_t g = 0;
	if (gf_jv_parse(a->hb_ans.data, a->hb_ans.len, &v, &e) == 0 &&
	    !gf_jv_int(gf_jv_get(v, "generation"), &g))
		g = 0;
	gf_jv_free(v);
	return g > 0 ? (uint64_t)g : 0;
}

/* A heartbeat answered 200: counted and timed when in the window. */
static void heartbeat_answered(struct cl *c, struct agent *a, int64_t now)
{
	if (in_window(now)) {
		struct gf_jv *v = NULL;
		struct gf_err e;
		const char *st = NULL;
		if (gf_jv_parse(a->hb_ans.data, a->hb_ans.len, &v, &e) == 0)
			st = gf_jv_str(gf_jv_get(v, "state"));
		if (!st || strcmp(st, "ready") != 0)
			c->w_notready++;
		gf_jv_free(v);
		c->w_ok++;
		if (c->nlat == c->lcap) {
			c->lcap = c->lcap ? 2 * c->lcap : 4096;
			c->lat = gf_reallocarray(c->lat, c->lcap,
						 sizeof(*c->lat));
		}
		c->lat[c->nlat++] = (double)(now - a->hb_sent) / 1e6;
		if (a->last_ok >= atomic_load(&R.ws) &&
		    now - a->last_ok > c->w_gap_max)
			c->w_gap_max = now - a->last_ok;
	}
	a->last_ok = now;
}

/* The PUT or a heartbeat answered (or failed). */
static void hb_done(struct cl *c, struct agent *a, CURLcode rc, int64_t now)
{
	long status = 0;
	curl_easy_getinfo(a->hb, CURLINFO_RESPONSE_CODE, &status);
	a->hb_busy = false;
	if (a->st == A_REGISTERING) {
		c->reg_busy--;
		if (rc != CURLE_OK || status != 200) {
			note_err(c, "PUT", a, rc, status);
			a->st = A_NEW;
			fifo_push(&c->reg_retry, a, now + RETRY_NS);
			return;
		}
		gf_buf_release(&a->body); /* the inventory: not needed */
		gf_buf_init(&a->body, GF_NP_BODY_MAX);
		char url[160];
		url_of(a, "/heartbeat", url, sizeof(url));
		curl_easy_setopt(a->hb, CURLOPT_URL, url);
		curl_easy_setopt(a->hb, CURLOPT_CUSTOMREQUEST, NULL);
		curl_easy_setopt(a->hb, CURLOPT_POST, 1L);
		curl_easy_setopt(a->hb, CURLOPT_TIMEOUT_MS, 10000L);
		a->st = A_READY;
		a->last_ok = a->reg_at = now;
		if (atomic_fetch_add(&R.registered, 1) + 1 == R.n)
			atomic_store(&R.reg_done_ns, now);
		send_poll(a);
		return;
	}
	bool newer = false;
	if (rc != CURLE_OK || status != 200) {
		note_err(c, "heartbeat", a, rc, status);
	} else {
		heartbeat_answered(c, a, now);
		newer = R.conns == 1 && acked_gen(a) > a->gen;
	}
	if (newer && !a->poll_busy)
		send_poll(a);  /* the heartbeat, owed or not, after it */
	else if (a->hb_owed) { /* late: the next one at once, as an agent
				  does */
		a->hb_owed = false;
		send_heartbeat(a, now);
	}
}

/* The long poll answered: the assignments taken, the poll sent again. */
static void poll_done(struct cl *c, struct agent *a, CURLcode rc, int64_t now)
{
	long status = 0;
	curl_easy_getinfo(a->poll, CURLINFO_RESPONSE_CODE, &status);
	a->poll_busy = false;
	struct gf_jv *v = NULL;
	struct gf_err e;
	struct gf_np_assignments as;
	if (rc != CURLE_OK || status != 200 ||
	    gf_jv_parse(a->poll_ans.data, a->poll_ans.len, &v, &e) != 0 ||
	    gf_np_assignments_read(v, &as, &e) != 0) {
		gf_jv_free(v);
		note_err(c, "assignments", a, rc, status);
		fifo_push(&c->poll_retry, a, now + RETRY_NS);
		return;
	}
	gf_jv_free(v);
	a->gen = as.generation;
	gf_free(a->run);
	a->run = gf_calloc((size_t)as.n + 1, sizeof(*a->run));
	a->nrun = as.n;
	for (int i = 0; i < as.n; i++) {
		a->run[i] = as.v[i].ref;
		int k;
		if (R.assigned && sscanf(as.v[i].name, "bench-%d", &k) == 1 &&
		    k >= 0 && k < R.njobs) {
			long long zero = 0;
			atomic_compare_exchange_strong(&R.assigned[k], &zero,
						       now);
		}
	}
	gf_np_assignments_release(&as);
	if (R.conns == 2) {
		send_poll(a);
	} else if (a->hb_owed) { /* its connection is free now */
		a->hb_owed = false;
		send_heartbeat(a, now);
	}
}

int on_socket(CURL *h, curl_socket_t fd, int what, void *arg, void *sockp)
{
	(void)h;
	struct grp *g = arg;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(g->ep, EPOLL_CTL_DEL, fd, NULL);
		return 0;
	}
	struct epoll_event ev = { 0 };
	ev.data.u64 = (uint64_t)g->idx << 32 | (uint32_t)fd;
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) |
		    (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
	if (!sockp) {
		curl_multi_assign(g->m, fd, g);
		if (epoll_ctl(g->ep, EPOLL_CTL_ADD, fd, &ev) == 0 ||
		    errno != EEXIST)
			return 0;
	}
	if (epoll_ctl(g->ep, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT)
		epoll_ctl(g->ep, EPOLL_CTL_ADD, fd, &ev);
	return 0;
}

int on_timer(CURLM *m, long ms, void *arg)
{
	(void)m;
	struct grp *g = arg;
	g->timer_at = ms < 0 ? -1 : mono_ns() + (int64_t)ms * 1000000;
	return 0;
}

static void finished(struct cl *c, struct grp *g)
{
	CURLMsg *msg;
	int left;
	int64_t now = mono_ns();
	while ((msg = curl_multi_info_read(g->m, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		CURL *h = msg->easy_handle;
		CURLcode rc = msg->data.result;
		char *p = NULL;
		curl_easy_getinfo(h, CURLINFO_PRIVATE, &p);
		struct agent *a = (struct agent *)(void *)p;
		curl_multi_remove_handle(g->m, h);
		if (h == a->hb)
			hb_done(c, a, rc, now);
		else
			poll_done(c, a, rc, now);
	}
}

static int64_t hb_due(const struct cl *c)
{
	return R.t0 + c->hb_round * HB_NS +
	       (int64_t)c->a[c->hb_i]->id * HB_NS / R.n;
}

/* Start what is due: registrations, retries, heartbeats; the next time
 * something is. */
static int64_t start_due(struct cl *c, int64_t now)
{
	struct agent *a;
	while (c->reg_busy < REG_WINDOW &&
	       ((a = fifo_due(&c->reg_retry, now)) ||
		(c->reg_next < c->na && (a = c->a[c->reg_next++]))))
		send_register(c, a);
	while ((a = fifo_due(&c->poll_retry, now)))
		if (R.conns == 2 || !a->hb_busy)
			send_poll(
				a); /* else the heartbeat's answer starts it */
	if (c->na == 0)
		return fifo_next(&c->reg_retry) < fifo_next(&c->poll_retry)
			       ? fifo_next(&c->reg_retry)
			       : fifo_next(&c->poll_retry);
	int64_t due;
	while ((due = hb_due(c)) <= now) {
		a = c->a[c->hb_i];
		/* the first one a period after the PUT, as an agent does */
		if (a->st == A_READY && now - a->reg_at >= HB_NS / 2) {
			if (!a->hb_busy && !(R.conns == 1 && a->poll_busy)) {
				send_heartbeat(a, now);
			} else {
				a->hb_owed = true;
				if (in_window(now))
					c->w_late++;
			}
		}
		if (++c->hb_i == c->na) {
			c->hb_i = 0;
			c->hb_round++;
		}
	}
	int64_t next = due;
	if (fifo_next(&c->reg_retry) < next)
		next = fifo_next(&c->reg_retry);
	if (fifo_next(&c->poll_retry) < next)
		next = fifo_next(&c->poll_retry);
	return next;
}

void *client(void *arg)
{
	struct cl *c = arg;
	struct epoll_event ev[256];
	int running = 0;
	while (!atomic_load(&R.stop)) {
		int64_t now = mono_ns();
		int64_t next = start_due(c, now);
		for (int i = 0; i < c->ng; i++)
			if (c->g[i].timer_at >= 0 && c->g[i].timer_at < next)
				next = c->g[i].timer_at;
		now = mono_ns();
		int64_t wait = next > now ? (next - now + 999999) / 1000000 : 0;
		if (wait > 100)
			wait = 100;
		int n = epoll_wait(c->ep, ev, 256, (int)wait);
		for (int i = 0; i < n; i++) {
			struct grp *g = &c->g[ev[i].data.u64 >> 32];
			int fd = (int)(ev[i].data.u64 & 0xffffffffu);
			int f = (ev[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
				(ev[i].events & EPOLLOUT ? CURL_CSELECT_OUT
							 : 0) |
				(ev[i].events & (EPOLLERR | EPOLLHUP)
					 ? CURL_CSELECT_ERR
					 : 0);
			curl_multi_socket_action(g->m, fd, f, &running);
			g->touched = true;
		}
		now = mono_ns();
		for (int i = 0; i < c->ng; i++) {
			struct grp *g = &c->g[i];
			if (g->timer_at >= 0 && now >= g->timer_at) {
				g->timer_at = -1;
				curl_multi_socket_action(
					g->m, CURL_SOCKET_TIMEOUT, 0, &running);
				g->touched = true;
			}
			if (g->touched) {
				g->touched = false;
				finished(c, g);
			}
		}
		int64_t we = atomic_load(&R.we);
		if (we && mono_ns() >= we && !atomic_load(&c->past_window))
			atomic_store(&c->past_window, 1);
	}
	return NULL;
}
