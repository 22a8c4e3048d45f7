// The timing sidecar format: every candidate's timing and the device of one
// rank's record run, beside its record file as `<prefix>.rank<N>.timings.json`
// or, converted, as the binary `.timings.tlrt` (schemas/record_timings.fbs).
// Both forms are read and written here, so each converts to the other
// without loss.
#pragma once

#include <string>
#include <string_view>

#include "tunelock/records/record_file.hpp"

namespace tunelock {

// Adds a timing sidecar's contents, JSON or binary (told apart by the
// binary file identifier). Throws Error naming origin and the problem.
void add_timings_from_json(RecordFile& record, std::string_view text, const std::string& origin);
void add_timings(RecordFile& record, std::string_view bytes, const std::string& origin);

// A record's timings and device as a sidecar: canonical JSON, or binary
// (schemas/record_timings.fbs). Each converts to the other without loss.
std::string timings_to_json(const RecordFile& record);
std::string timings_to_binary(const RecordFile& record);

}  // namespace tunelock
