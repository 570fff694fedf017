/*
 * doc.c - documents rendered by one thread and served by many
 * (server.h): the agent's pages, a controller's cached listings.
 *
 * A published copy is immutable and reference-counted: the slot holds
 * one reference, and each answer sending it holds one until
 * libmicrohttpd is done with it (its free callback).  Publishing swaps
 * the slot's pointer under the slot's lock; serving takes a reference
 * under the same lock.  Neither copies the bytes nor holds the lock
 * while anything is rendered or sent, so a scrape never waits on a
 * render and a render never waits on a slow client.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "server/server_int.h"
#include "util/mem.h"

struct copy {
	atomic_int refs;
	unsigned status;
	size_t len;
	char *data;
};

struct gf_http_doc {
	pthread_mutex_t lock;
	struct copy *cur; /* under lock; NULL before the first publish */
	char *type;	  /* owned */
};

static void unref(void *cls)
{
	struct copy *c = cls;
	if (c && atomic_fetch_sub(&c->refs, 1) == 1) {
		gf_free(c->data);
		gf_free(c);
	}
}

struct gf_http_doc *gf_http_doc_new(const char *type)
{
	struct gf_http_doc *d = gf_calloc(1, sizeof(*d));
	pthread_mutex_init(&d->lock, NULL);
	d->type = gf_strdup(type);
	return d;
}

void gf_http_doc_free(struct gf_http_doc *d)
{
	if (!d)
		return;
	unref(d->cur);
	pthread_mutex_destroy(&d->lock);
	gf_free(d->type);
	gf_free(d);
}

int gf_http_doc_publish(struct gf_http_doc *d, unsigned status,
			struct gf_buf *b)
{
	int err = gf_buf_error(b);
	if (err)
		return err;
	struct copy *c = gf_calloc(1, sizeof(*c));
	atomic_init(&c->refs, 1);
	c->status = status;
	c->len = b->len;
	c->data = b->data ? b->data : gf_strdup("");
	size_t cap = b->cap;
	gf_buf_init(b, cap); /* the bytes are the copy's now */
	pthread_mutex_lock(&d->lock);
	struct copy *old = d->cur;
	d->cur = c;
	pthread_mutex_unlock(&d->lock);
	unref(old);
	return 0;
}

int gf_reply_doc(struct gf_http_req *r, struct gf_http_doc *d)
{
	pthread_mutex_lock(&d->lock);
	struct copy *c = d->cur;
	if (c)
		atomic_fetch_add(&c->refs, 1);
	pthread_mutex_unlock(&d->lock);
	if (!c)
		return gf_reply_error(r, 503, "not-ready",
				      "nothing rendered yet");
	struct MHD_Response *resp =
		MHD_create_response_from_buffer_with_free_callback_cls(
			c->len, c->data, unref, c);
	if (!resp) {
		unref(c);
		return GF_EINVAL;
	}
	return gf__reply_response(r, c->status, d->type, resp, c->len);
}
