#ifndef CISAL_H
#define CISAL_H
// Typed wrappers for ISA-L's inflater (igzip): the audience reader's gzip decoder. The state
// struct stays opaque to Swift (it holds fixed arrays and a union); these calls are all it needs.
#include <stdint.h>
#include <stdlib.h>
#include <isa-l/igzip_lib.h>

typedef struct inflate_state cisal_inflater;

/// An inflater of one gzip member's deflate data and trailer (its CRC-32 and length checked:
/// ISAL_GZIP_NO_HDR_VER), or NULL when memory ran out. The header is the caller's to read: ISA-L
/// 2.30 miscounts the header CRC (FHCRC) of a header that arrives in pieces.
static inline cisal_inflater *cisal_inflater_create(void) {
    cisal_inflater *state = (cisal_inflater *)malloc(sizeof(cisal_inflater));
    if (state == NULL) return NULL;
    isal_inflate_init(state);
    state->crc_flag = ISAL_GZIP_NO_HDR_VER;
    return state;
}

static inline void cisal_inflater_destroy(cisal_inflater *state) { free(state); }

/// Ready for the next gzip member of a concatenated file (after its header).
static inline void cisal_inflater_reset(cisal_inflater *state) {
    isal_inflate_reset(state);
    state->crc_flag = ISAL_GZIP_NO_HDR_VER;
}

/// Inflates from `input` into `output`; returns ISA-L's status (negative: bad data) and says how
/// much input is left unread, how much output was produced, and whether the member ended (its
/// trailer checked). `unread` is ISA-L's own count, unchecked: after some bad data it exceeds
/// `input_count` (it wrapped below zero), so the caller checks it before subtracting.
static inline int cisal_inflate(
    cisal_inflater *state, const uint8_t *input, uint32_t input_count, uint8_t *output,
    uint32_t output_count, uint32_t *unread, uint32_t *produced, int *member_ended
) {
    state->next_in = (uint8_t *)input;
    state->avail_in = input_count;
    state->next_out = output;
    state->avail_out = output_count;
    int status = isal_inflate(state);
    *unread = state->avail_in;
    *produced = output_count - state->avail_out;
    *member_ended = state->block_state == ISAL_BLOCK_FINISH;
    state->next_in = NULL;
    state->next_out = NULL;
    return status;
}
#endif
