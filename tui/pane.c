/* Panes of wrapped text lines with a title rule (warnings). */
#include "tui/view.h"

#include <stdio.h>
#include <string.h>

#include "core/sanitize.h"
#include "core/util.h"

void tui_add_wline(struct wline *lines, int *n, enum bt_role role, const char *s, int lead,
                      enum bt_role lead_role)
{
    if (*n >= MAX_WLINES)
        return;
    struct wline *w = &lines[(*n)++];
    bt_strlcpy(w->s, s, sizeof w->s);
    w->role = role;
    w->lead = lead;
    w->lead_role = lead_role;
    w->route = -1;
    w->code = -1;
    w->first = false;
}

/* Bytes of s that fit in avail columns, cut after the last space that fits (a
 * word longer than the line is cut where the line ends). */
static int fit(const char *s, int avail)
{
    int cols = 0, i = 0, last_space = -1;
    while (s[i]) {
        int len = s[i] & 0x80 ? bt_utf8_len((const unsigned char *)s + i) : 1;
        char one[8] = {0};
        memcpy(one, s + i, (size_t)(len > 0 ? len : 1));
        int w = tui_width(one);
        if (cols + w > avail)
            return last_space > 0 ? last_space : (i ? i : (len > 0 ? len : 1));
        if (s[i] == ' ')
            last_space = i;
        cols += w;
        i += len > 0 ? len : 1;
    }
    return i;
}

/* Word-wraps s at width w into lines indented by indent. */
void tui_wrap(struct wline *lines, int *n, const char *s, int w, int indent, enum bt_role role)
{
    int avail = w - indent;
    if (avail < 10)
        avail = 10;
    const char *p = s;
    while (*p) {
        int cut = fit(p, avail);
        char buf[400];
        snprintf(buf, sizeof buf, "%*s%.*s", indent, "", cut, p);
        tui_add_wline(lines, n, role, buf, 0, role);
        p += cut;
        while (*p == ' ')
            p++;
    }
}

/* One entry of a two-column list (help keys, detail figures): the name in a column
 * of 13 in the key role, the text wrapped at word boundaries beside it. */
void tui_entry(struct wline *lines, int *n, int width, const char *name, const char *text,
               enum bt_role role)
{
    int before = *n;
    tui_wrap(lines, n, text, width - 14, 0, role);
    for (int k = before; k < *n; k++) {
        char buf[sizeof lines[k].s + 16]; /* the name column and the line whole */
        snprintf(buf, sizeof buf, "%-13.13s %s", k == before ? name : "", lines[k].s);
        bt_strlcpy_cut(lines[k].s, buf, sizeof lines[k].s);
        lines[k].lead = 13;
        lines[k].lead_role = BT_ROLE_KEY;
    }
}

/* Lines [sc->pos, sc->pos + h) of lines at (x, y, w, h); a line too long for the
 * width ends at a word in an ellipsis (never half a word: Enter, or a wider terminal,
 * shows it whole). Sets the scroll's bounds for the keys. */
void tui_draw_lines(struct bt_tui *t, struct bt_rect r, const struct wline *lines, int n,
                    struct tui_scroll *sc)
{
    sc->lines = n;
    sc->page = r.h > 1 ? r.h - 1 : 1;
    sc->max = n > r.h ? n - r.h : 0;
    if (sc->pos > sc->max)
        sc->pos = sc->max;
    if (sc->pos < 0)
        sc->pos = 0;
    for (int i = 0; i < r.h && sc->pos + i < n; i++) {
        const struct wline *w = &lines[sc->pos + i];
        int y = r.y + i, x = r.x;
        if (w->lead) {
            char lead[16];
            snprintf(lead, sizeof lead, "%.*s", w->lead, w->s);
            x += tui_text(y, x, r.w, lead, A(t, w->lead_role));
        }
        tui_text_word(y, x, r.x + r.w - x, w->s + w->lead, A(t, w->role));
    }
}

/* "12-23/40": the lines shown of how many, for a pane that does not show them all. */
void tui_scroll_pos(const struct tui_scroll *sc, int shown, char *out, size_t n)
{
    out[0] = '\0';
    if (sc->lines > shown)
        snprintf(out, n, "%d-%d/%d", sc->pos + 1,
                 sc->pos + shown < sc->lines ? sc->pos + shown : sc->lines, sc->lines);
}

/* Moves a scrolled pane; says so when it cannot move. */
void tui_scroll_pane(struct bt_tui *t, struct tui_scroll *sc, int delta, const char *what)
{
    long to = (long)sc->pos + delta;
    if (to > sc->max)
        to = sc->max;
    if (to < 0)
        to = 0;
    if (to == sc->pos && delta) {
        if (sc->max == 0)
            snprintf(t->msg, sizeof t->msg, "all of the %s is shown", what);
        else
            snprintf(t->msg, sizeof t->msg, delta < 0 ? "top of the %s" : "end of the %s", what);
    }
    sc->pos = (int)to;
}

void tui_box_scroll_tag(struct bt_rect box, const struct tui_scroll *sc, int shown,
                        const char *keys, attr_t a)
{
    char pos[48];
    tui_scroll_pos(sc, shown, pos, sizeof pos);
    if (!pos[0])
        return;
    char tag[96];
    snprintf(tag, sizeof tag, " %s  %s ", pos, keys);
    int w = tui_width(tag);
    tui_text(box.y + box.h - 1, box.x + box.w - w - 2, w, tag, a | A_BOLD);
}

/* A pane of warning lines under a title rule; its position on the rule's right. */
void tui_draw_wlines(struct bt_tui *t, struct bt_rect area, const char *title,
                     const struct wline *lines, int n, struct tui_scroll *sc, bool focus)
{
    if (area.h <= 0)
        return;
    tui_rule(t, area.y, area.x, area.w, title);
    if (focus)
        tui_text(area.y, area.x + 2, area.w - 4, title, A(t, BT_ROLE_SORT));
    struct bt_rect body = {area.x + 1, area.y + 1, area.w - 2, area.h - 1};
    tui_draw_lines(t, body, lines, n, sc);
    char pos[48];
    tui_scroll_pos(sc, body.h, pos, sizeof pos);
    if (pos[0]) {
        char tag[64];
        snprintf(tag, sizeof tag, " %s%s ", pos, focus ? "" : " (Tab scrolls)");
        int w = (int)strlen(tag);
        tui_text(area.y, area.x + area.w - w - 1, w, tag, A(t, BT_ROLE_TITLE));
    }
}
