/*
 * html_page.h - what the self-contained HTML pages share (the chargeback
 * page, the simulation report): escaping, the page's head with the
 * common style, legend entries, and the top of a chart's axis.
 *
 * A page built with these fetches nothing: no script, no font, no
 * image, no url(); its charts are inline SVG.
 */
#ifndef GF_UTIL_HTML_PAGE_H
#define GF_UTIL_HTML_PAGE_H

#include "util/buf.h"

/* s with < > & " ' as entities: safe in text and in quoted attributes. */
void gf_html_esc(struct gf_buf *b, const char *s);

/*
 * "<!DOCTYPE html>" up to and including "<body>": the title (escaped),
 * the shared style (body, headings, .sub, tables, .legend, SVG text) and
 * extra_css after it (NULL for none; the caller's own rules, trusted).
 */
void gf_html_head(struct gf_buf *b, const char *title, const char *extra_css);

/* One legend entry: a colour swatch and the text (escaped). */
void gf_html_legend_item(struct gf_buf *b, const char *colour, const char *s);

/* An axis's top: the next 1, 2, 2.5 or 5 x 10^n at or above v (1 when
 * v is not positive). */
double gf_html_nice(double v);

#endif
