/* Kernel names for Program (l_program.c): the message of a lookup that found nothing (nearest
   names, the enumerator hint, the kernels), and a kernel's details from its demangled signature. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gx_cxxname.h"
#include "gx_symbols.h"
#include "l_util.h"
#include "l_types.h"

/* "a<float> (_Z1aIfEvv), b" for messages: names as C++ writes them, at most `limit`. */
static void describe_symbols(const char *const *symbols, int count, char *out, size_t size)
{
    out[0] = 0;
    for (int i = 0; i < count && strlen(out) + 64 < size; i++) {
        char name[GX_NAME_BYTES];
        gx_symbol_name(symbols[i], name, sizeof name);
        size_t used = strlen(out);
        if (used + strlen(name) + 3 >= size)
            break; /* the list says as many whole names as fit */
        snprintf(out + used, size - used, "%s%s", i ? ", " : "", name);
    }
    if (!count)
        snprintf(out, size, "(no kernels)");
}

/* A miss: the nearest names first, a hint where the name gives enumerators and the program only
   records enum values, then the kernels it has. */
int l_raise_kernel_not_found(lua_State *L, const l_program *program, const char *const *symbols, int count,
                             const char *name)
{
    luaL_Buffer message;
    luaL_buffinit(L, &message);
    char line[GX_NAME_BYTES + 512], kernel_name[GX_NAME_BYTES];
    int nearest[3];
    int near_count = gx_symbol_nearest(symbols, count, name, nearest, 3);
    if (near_count) {
        luaL_addstring(&message, "; nearest: ");
        for (int i = 0; i < near_count; i++) {
            gx_symbol_name(symbols[nearest[i]], kernel_name, sizeof kernel_name);
            snprintf(line, sizeof line, "%s%s", i ? ", " : "", kernel_name);
            luaL_addstring(&message, line);
        }
    }
    int enum_match = gx_symbol_enumerator_match(symbols, count, name);
    if (enum_match >= 0) {
        gx_symbol_name(symbols[enum_match], kernel_name, sizeof kernel_name);
        int has_source = strcmp(program->compiler, "binary") != 0;
        snprintf(line, sizeof line,
                 ". It has %s, whose enum arguments are recorded as values, not enumerator names: %s", kernel_name,
                 has_source ? "give the name to compile{names = {...}} (gpuexp then asks the compiler for its exact "
                              "symbol), or write the enum argument as (Enum)value"
                            : "a binary does not say which enumerator has which value, so write the enum argument as "
                              "(Enum)value, as in that name");
        luaL_addstring(&message, line);
    }
    char list[4 * GX_NAME_BYTES];
    describe_symbols(symbols, count, list, sizeof list);
    luaL_addstring(&message, ". It has: ");
    luaL_addstring(&message, list);
    luaL_pushresult(&message);
    return l_raisef(L, GX_ERR_USAGE, "no kernel '%s' in %s%s", name, program->source_name, lua_tostring(L, -1));
}

/* {name, symbol, base, template_args = {...}, params = {...}} of one kernel, from its demangled
   signature as the demangler writes it ("void ns::k<float, 128u>(float*, int)"). */
void l_push_kernel_details(lua_State *L, const char *symbol)
{
    char name[GX_NAME_BYTES];
    gx_symbol_name(symbol, name, sizeof name);
    lua_createtable(L, 0, 5);
    l_set_string(L, "name", name);
    l_set_string(L, "symbol", symbol);
    enum { MAX_ITEMS = 64 };
    char *items[MAX_ITEMS];
    /* the template list: the '<' of the last component, at the top level */
    const char *list = NULL;
    int depth = 0;
    for (const char *p = name; *p; p++) {
        if (*p == '<' || *p == '(') {
            if (depth == 0 && *p == '<')
                list = p;
            depth++;
        } else if ((*p == '>' || *p == ')') && depth > 0)
            depth--;
        else if (depth == 0 && p[0] == ':' && p[1] == ':')
            list = NULL;
    }
    lua_pushlstring(L, name, list ? (size_t)(list - name) : strlen(name));
    lua_setfield(L, -2, "base");
    int n = list ? gx_cxx_list(list, items, MAX_ITEMS, NULL) : 0;
    lua_createtable(L, n > 0 ? n : 0, 0);
    for (int i = 0; i < n; i++) {
        lua_pushstring(L, items[i]);
        lua_rawseti(L, -2, i + 1);
        free(items[i]);
    }
    lua_setfield(L, -2, "template_args");
    char *signature = gx_demangle(symbol);
    const char *params = NULL;
    if (signature) { /* the parameter list: the bracket matching the last ')' */
        size_t length = strlen(signature);
        depth = 0;
        for (size_t i = length; i-- > 0;) {
            if (signature[i] == ')')
                depth++;
            else if (signature[i] == '(' && --depth == 0) {
                params = signature + i;
                break;
            }
        }
    }
    n = params ? gx_cxx_list(params, items, MAX_ITEMS, NULL) : 0;
    lua_createtable(L, n > 0 ? n : 0, 0);
    for (int i = 0; i < n; i++) {
        lua_pushstring(L, items[i]);
        lua_rawseti(L, -2, i + 1);
        free(items[i]);
    }
    lua_setfield(L, -2, "params"); /* extern "C" kernels: no types in the symbol, an empty list */
    free(signature);
}
