/* Themes: plain `role = fg [on bg] [bold] [dim] [reverse] [underline]` files
 * (btop habit). Colors are names, 0-255, or #rrggbb; a key missing from a file
 * keeps the built-in default; the terminal's own background is the default
 * background. Search order: $XDG_CONFIG_HOME/bedtop/themes, then the data dir
 * (<datadir>/themes, or ./themes beside the binary in the source tree). */
#ifndef BEDTOP_THEME_H
#define BEDTOP_THEME_H
#include <stdbool.h>
#include <stddef.h>

/* One source of truth for the roles: id, key in theme files, built-in default. */
#define BT_ROLES(X)                                     \
    X(NORMAL, "normal", "default")                      \
    X(DIM, "dim", "bright-black")                       \
    X(HEADER, "header", "bright-white on #1c3a5e bold")  \
    X(TITLE, "title", "bright-cyan bold")               \
    X(RULE, "rule", "#4e6a8a")                          \
    X(COLHEAD, "colhead", "black on #8fb4d8")           \
    X(SORT, "sort", "black on #d7af5f bold")            \
    X(SELECTED, "selected", "black on #5fafd7 bold")   \
    X(OK, "ok", "green")                                \
    X(WARN, "warn", "yellow bold")                      \
    X(CRIT, "crit", "bright-red bold")                  \
    X(UNKNOWN, "unknown", "magenta bold")               \
    X(INFO, "info", "cyan")                             \
    X(BANNER, "banner", "black on #ffaf00 bold")        \
    X(SETTLED, "settled", "#5fd75f")                    \
    X(ESTIMATED, "estimated", "#5fafff")                \
    X(RESERVED, "reserved", "#ff875f")                  \
    X(EMPTY, "empty", "bright-black")                   \
    X(QUOTA, "quota", "bright-red")                     \
    X(THROTTLE, "throttle", "#ff5f5f")                  \
    X(P50, "p50", "#87d7ff")                            \
    X(P99, "p99", "#d787ff")                            \
    X(INFLIGHT, "inflight", "#ffd75f")                  \
    X(LIMIT, "limit", "bright-red")                     \
    X(KNEE, "knee", "bright-white bold")                \
    X(AXIS, "axis", "bright-black")                     \
    X(STATUS, "status", "black on #8fb4d8")             \
    X(STALE, "stale", "bright-white on red bold")       \
    X(KEY, "key", "bright-white bold")                  \
    X(HELP, "help", "default on #262626")

#define BT_ROLE_ENUM(id, key, def) BT_ROLE_##id,
enum bt_role { BT_ROLES(BT_ROLE_ENUM) BT_ROLE_COUNT };
#undef BT_ROLE_ENUM

#define BT_COLOR_DEFAULT (-1)
#define BT_COLOR_RGB 0x1000000   /* flag: low 24 bits are 0xrrggbb */

enum { BT_ATTR_BOLD = 1, BT_ATTR_DIM = 2, BT_ATTR_REVERSE = 4, BT_ATTR_UNDERLINE = 8 };

struct bt_style {
    int fg, bg;          /* BT_COLOR_DEFAULT, 0-255, or BT_COLOR_RGB | rgb */
    unsigned attrs;
};

struct bt_theme {
    char name[64];
    struct bt_style role[BT_ROLE_COUNT];
};

const char *bt_role_key(enum bt_role r);
/* Parses one style value ("black on #ffaf00 bold"); false on a bad word. */
bool bt_style_parse(const char *s, struct bt_style *out);
/* The built-in default theme (equal to themes/default.theme). */
void bt_theme_default(struct bt_theme *t);
/* Overlays a theme file on t; errors as "file:line: why". */
bool bt_theme_load_file(struct bt_theme *t, const char *path, char *err, size_t errlen);
/* Finds <name>.theme (or a path containing '/') and loads it over the default. */
bool bt_theme_load(struct bt_theme *t, const char *name, char *err, size_t errlen);
/* Theme directories in search order; returns how many (at most max). */
int bt_theme_dirs(char dirs[][1024], int max);
/* Names of the themes found (sorted, deduplicated, "default" always first). */
int bt_theme_list(char names[][64], int max);

/* Color reduction for terminals with fewer colors. */
int bt_color_to_256(int c);
int bt_color_to_8(int c);
#endif
