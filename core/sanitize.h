/* One sanitiser per sink for every string that comes from outside (a ModelId from
 * ListMetrics, a route name from the config, a string in a recording, an error
 * message from a server). Call the one for the sink you write to; never write an
 * outside string raw.
 *
 *   terminal text  control bytes (C0, DEL, C1 as UTF-8 U+0080..U+009F) and bytes that
 *                  are not valid UTF-8 become '?', so no escape sequence, bell or
 *                  title change reaches the terminal; valid printable UTF-8 is kept
 *                  unless ascii_only.
 *   CSV field      always quoted ("" doubles a quote); a field that a spreadsheet
 *                  would read as a formula (leading = + - @, or tab/CR) gets a
 *                  leading apostrophe; control bytes become '?'. Plain numbers that
 *                  bedtop formats itself go through bt_san_csv_number instead.
 *   Prometheus     label values escaped as the text format says (\\ \" \n); other
 *   label value    control bytes and invalid UTF-8 become '?'.
 *   JSON           cJSON (and bt_buf_json_str) escape quotes and C0 controls;
 *                  bt_san_json_text then makes the printed document safe to show
 *                  on a terminal and valid UTF-8: DEL and C1 controls become
 *                  \u escapes and bytes that are not UTF-8 become \ufffd.
 *   SVG/cairo      valid UTF-8 always (cairo refuses anything else, and the charts
 *   text           with it): bytes that are not UTF-8 and control characters become
 *                  U+FFFD, never refused; the rest is kept.
 *   Markdown       as terminal text (no line break gets through, so nothing starts a
 *   text           line: no heading, list or quote), and the characters that mean
 *                  something inline (\ ` * _ [ ] < > | ! ~ &) backslash-escaped, so a
 *                  note cannot open a link, an image, a table cell, an entity or HTML.
 */
#ifndef BEDTOP_SANITIZE_H
#define BEDTOP_SANITIZE_H
#include <stdbool.h>
#include <stddef.h>

struct bt_buf;

/* Terminal: appends the sanitised text of s to b. */
void bt_san_term_buf(struct bt_buf *b, const char *s, bool ascii_only);
/* Terminal: into a fixed buffer (truncated on a character boundary); returns out. */
char *bt_san_term(char *out, size_t n, const char *s);
/* True when s would be written unchanged to a terminal. */
bool bt_san_term_clean(const char *s);

/* CSV: appends s as one quoted field. */
void bt_san_csv_buf(struct bt_buf *b, const char *s);

/* JSON: appends the JSON text json (as cJSON prints it) with DEL, C1 controls
 * and invalid UTF-8 escaped; the document's meaning is unchanged otherwise. */
void bt_san_json_text(struct bt_buf *b, const char *json);

/* SVG/cairo text: appends s as valid UTF-8 (U+FFFD for what is not, and for controls). */
void bt_san_utf8_buf(struct bt_buf *b, const char *s);

/* Markdown: appends s as inline text (in a paragraph, a list item or a table cell). */
void bt_san_md_buf(struct bt_buf *b, const char *s);

/* Prometheus text format: appends s escaped for use inside a label value's quotes. */
void bt_san_prom_label_buf(struct bt_buf *b, const char *s);
/* The same three escapes (\\ \" \n) and nothing else: a series' identity
 * (label="value",...) keeps every other byte as it came, so two series told apart
 * by a byte the sanitiser would turn into '?' stay apart. */
void bt_label_escape_buf(struct bt_buf *b, const char *s);

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when s does not start one
 * (NUL, a stray continuation byte, an overlong or surrogate form, a truncated tail). */
int bt_utf8_len(const unsigned char *s);
#endif
