#include "tui/theme.h"

#include <dirent.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/util.h"
#include "io/file.h"

#define BT_ROLE_KEY(id, key, def) key,
static const char *const role_keys[BT_ROLE_COUNT] = {BT_ROLES(BT_ROLE_KEY)};
#undef BT_ROLE_KEY
#define BT_ROLE_DEF(id, key, def) def,
static const char *const role_defaults[BT_ROLE_COUNT] = {BT_ROLES(BT_ROLE_DEF)};
#undef BT_ROLE_DEF

const char *bt_role_key(enum bt_role r)
{
    return (int)r >= 0 && r < BT_ROLE_COUNT ? role_keys[r] : "?";
}

static const char *const color_names[16] = {
    "black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
    "bright-black", "bright-red", "bright-green", "bright-yellow", "bright-blue",
    "bright-magenta", "bright-cyan", "bright-white",
};

static bool parse_color(const char *w, int *out)
{
    if (!strcasecmp(w, "default") || !strcasecmp(w, "none")) {
        *out = BT_COLOR_DEFAULT;
        return true;
    }
    for (int i = 0; i < 16; i++) {
        if (!strcasecmp(w, color_names[i])) {
            *out = i;
            return true;
        }
    }
    if (!strcasecmp(w, "gray") || !strcasecmp(w, "grey")) {
        *out = 8;
        return true;
    }
    if (w[0] == '#' && strlen(w) == 7) {
        unsigned v = 0;
        for (int i = 1; i < 7; i++) {
            char c = w[i];
            int d = c >= '0' && c <= '9' ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0)
                return false;
            v = v * 16 + (unsigned)d;
        }
        *out = BT_COLOR_RGB | (int)v;
        return true;
    }
    long n;
    if (bt_parse_long(w, 0, 255, &n)) {
        *out = (int)n;
        return true;
    }
    return false;
}

bool bt_style_parse(const char *s, struct bt_style *out)
{
    struct bt_style st = {BT_COLOR_DEFAULT, BT_COLOR_DEFAULT, 0};
    char buf[256];
    if (bt_strlcpy(buf, s, sizeof buf) >= sizeof buf)
        return false;
    bool want_bg = false, have_fg = false;
    char *p = buf;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        char *w = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if (*p)
            *p++ = '\0';
        int c;
        if (!strcasecmp(w, "on")) {
            if (want_bg)
                return false;
            want_bg = true;
        } else if (!strcasecmp(w, "bold")) {
            st.attrs |= BT_ATTR_BOLD;
        } else if (!strcasecmp(w, "dim")) {
            st.attrs |= BT_ATTR_DIM;
        } else if (!strcasecmp(w, "reverse")) {
            st.attrs |= BT_ATTR_REVERSE;
        } else if (!strcasecmp(w, "underline")) {
            st.attrs |= BT_ATTR_UNDERLINE;
        } else if (parse_color(w, &c)) {
            if (want_bg) {
                st.bg = c;
                want_bg = false;
            } else if (!have_fg) {
                st.fg = c;
                have_fg = true;
            } else {
                return false;
            }
        } else {
            return false;
        }
    }
    if (want_bg)
        return false; /* "on" with no color after it */
    *out = st;
    return true;
}

void bt_theme_default(struct bt_theme *t)
{
    memset(t, 0, sizeof *t);
    bt_strlcpy(t->name, "default", sizeof t->name);
    for (int r = 0; r < BT_ROLE_COUNT; r++)
        if (!bt_style_parse(role_defaults[r], &t->role[r]))
            t->role[r] = (struct bt_style){BT_COLOR_DEFAULT, BT_COLOR_DEFAULT, 0};
}

struct load_ctx {
    struct bt_theme *t;
    const char *path;
    char err[256];
    int line;
};

static int on_key(void *user, const char *section, const char *key, const char *value)
{
    struct load_ctx *c = user;
    (void)section;
    for (int r = 0; r < BT_ROLE_COUNT; r++) {
        if (strcmp(key, role_keys[r]) != 0)
            continue;
        if (!bt_style_parse(value, &c->t->role[r])) {
            snprintf(c->err, sizeof c->err, "bad style '%.80s' for %s (want: fg [on bg] "
                     "[bold|dim|reverse|underline]; colors by name, 0-255 or #rrggbb)",
                     value, key);
            return 0;
        }
        return 1;
    }
    if (!strcmp(key, "name"))
        return 1; /* a display name, informational */
    snprintf(c->err, sizeof c->err, "unknown key '%.60s'", key);
    return 0;
}

bool bt_theme_load_file(struct bt_theme *t, const char *path, char *err, size_t errlen)
{
    struct load_ctx c = {.t = t, .path = path};
    int rc = ini_parse(path, on_key, &c);
    if (rc < 0) {
        snprintf(err, errlen, "%s: cannot open theme", path);
        return false;
    }
    if (rc > 0) {
        snprintf(err, errlen, "%s:%d: %s", path, rc, c.err[0] ? c.err : "syntax error");
        return false;
    }
    return true;
}

int bt_theme_dirs(char dirs[][1024], int max)
{
    int n = 0;
    char base[900];
    if (n < max && bt_xdg_dir("XDG_CONFIG_HOME", ".config", base, sizeof base)) /* never the cwd */
        snprintf(dirs[n++], 1024, "%s/bedtop/themes", base);
    const char *env = getenv("BEDTOP_DATADIR");
    if (n < max && env && *env)
        snprintf(dirs[n++], 1024, "%s/themes", env);
    /* beside the binary first, so a source-tree build never picks up an older install */
    char exe[900];
    if (bt_exe_dir(exe, sizeof exe)) {
        if (n < max)
            snprintf(dirs[n++], 1024, "%s/themes", exe);
        if (n < max)
            snprintf(dirs[n++], 1024, "%s/../themes", exe);
    }
    if (n < max)
        snprintf(dirs[n++], 1024, "%s/themes", BEDTOP_DATADIR);
    return n;
}

bool bt_theme_load(struct bt_theme *t, const char *name, char *err, size_t errlen)
{
    bt_theme_default(t);
    if (!name || !*name || !strcmp(name, "default"))
        name = "default";
    if (strchr(name, '/')) {
        bt_strlcpy(t->name, name, sizeof t->name);
        return bt_theme_load_file(t, name, err, errlen);
    }
    char dirs[8][1024];
    int nd = bt_theme_dirs(dirs, 8);
    for (int i = 0; i < nd; i++) {
        struct bt_buf path = {0}; /* whole: a cut name must not find another file */
        bt_buf_printf(&path, "%s/%s.theme", dirs[i], name);
        if (access(bt_buf_str(&path), R_OK) == 0) {
            bt_strlcpy(t->name, name, sizeof t->name);
            bool ok = bt_theme_load_file(t, bt_buf_str(&path), err, errlen);
            bt_buf_free(&path);
            return ok;
        }
        bt_buf_free(&path);
    }
    if (!strcmp(name, "default"))
        return true; /* built in */
    snprintf(err, errlen, "theme '%s' not found (looked for %s.theme in %s and the data dir)",
             name, name, nd ? dirs[0] : "$XDG_CONFIG_HOME/bedtop/themes");
    return false;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

int bt_theme_list(char names[][64], int max)
{
    if (max <= 0)
        return 0;
    int n = 0;
    bt_strlcpy(names[n++], "default", 64);
    char dirs[8][1024];
    int nd = bt_theme_dirs(dirs, 8);
    for (int i = 0; i < nd; i++) {
        DIR *d = opendir(dirs[i]);
        if (!d)
            continue;
        for (struct dirent *e = readdir(d); e && n < max; e = readdir(d)) {
            size_t len = strlen(e->d_name);
            if (len <= 6 || len - 6 >= 64 || strcmp(e->d_name + len - 6, ".theme") != 0)
                continue;
            char nm[64];
            memcpy(nm, e->d_name, len - 6);
            nm[len - 6] = '\0';
            bool dup = false;
            for (int k = 0; k < n; k++)
                dup |= !strcmp(names[k], nm);
            if (!dup)
                bt_strlcpy(names[n++], nm, 64);
        }
        closedir(d);
    }
    if (n > 2)
        qsort(names + 1, (size_t)(n - 1), 64, cmp_name);
    return n;
}

/* The xterm 6x6x6 cube levels and the 24-step gray ramp. */
static const int cube[6] = {0, 95, 135, 175, 215, 255};

static int nearest_cube(int v)
{
    int best = 0;
    for (int i = 1; i < 6; i++)
        if (abs(cube[i] - v) < abs(cube[best] - v))
            best = i;
    return best;
}

int bt_color_to_256(int c)
{
    if (!(c & BT_COLOR_RGB))
        return c;
    int r = (c >> 16) & 255, g = (c >> 8) & 255, b = c & 255;
    int ri = nearest_cube(r), gi = nearest_cube(g), bi = nearest_cube(b);
    int cr = cube[ri], cg = cube[gi], cb = cube[bi];
    long dc = (long)(cr - r) * (cr - r) + (long)(cg - g) * (cg - g) + (long)(cb - b) * (cb - b);
    int avg = (r + g + b) / 3;
    int gi2 = avg < 8 ? 0 : avg > 238 ? 23 : (avg - 8) / 10;
    int gv = 8 + gi2 * 10;
    long dg = (long)(gv - r) * (gv - r) + (long)(gv - g) * (gv - g) + (long)(gv - b) * (gv - b);
    if (dg < dc)
        return 232 + gi2;
    return 16 + 36 * ri + 6 * gi + bi;
}

int bt_color_to_8(int c)
{
    if (c == BT_COLOR_DEFAULT)
        return c;
    if (c >= 0 && c < 16)
        return c & 7;
    int r, g, b;
    if (c & BT_COLOR_RGB) {
        r = (c >> 16) & 255, g = (c >> 8) & 255, b = c & 255;
    } else if (c >= 16 && c < 232) {
        int k = c - 16;
        r = cube[k / 36], g = cube[(k / 6) % 6], b = cube[k % 6];
    } else if (c >= 232 && c < 256) {
        r = g = b = 8 + (c - 232) * 10;
    } else {
        return BT_COLOR_DEFAULT;
    }
    int mx = r > g ? (r > b ? r : b) : (g > b ? g : b);
    if (mx < 64)
        return 0;
    /* a channel counts when it is at least half the brightest one */
    int bits = (r * 2 >= mx ? 1 : 0) | (g * 2 >= mx ? 2 : 0) | (b * 2 >= mx ? 4 : 0);
    return bits;
}
