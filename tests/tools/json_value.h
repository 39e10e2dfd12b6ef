// Test support: a command's --json output parsed (protobuf's JSON parser,
// into google.protobuf.Struct) and read by path, so that a test compares
// values rather than searching the text.
#ifndef MOESIM_TESTS_TOOLS_JSON_VALUE_H_
#define MOESIM_TESTS_TOOLS_JSON_VALUE_H_

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>

namespace moesim::testing {

// `text` parsed as a JSON object; an empty one, with a test failure, when
// it is not one.
inline google::protobuf::Struct ParseJsonObject(const std::string& text) {
  google::protobuf::Struct root;
  const auto status = google::protobuf::util::JsonStringToMessage(text, &root);
  if (!status.ok()) ADD_FAILURE() << "not a JSON object: " << status;
  return root;
}

// The value at `path`: object keys and array indices joined by '.'
// ("stages.0.peak_memory_gib"); nullptr where there is none.
inline const google::protobuf::Value* JsonAt(
    const google::protobuf::Struct& root, std::string_view path) {
  const google::protobuf::Value* value = nullptr;
  const google::protobuf::Struct* object = &root;
  while (!path.empty()) {
    const size_t dot = path.find('.');
    const std::string part(path.substr(0, dot));
    path = dot == std::string_view::npos ? "" : path.substr(dot + 1);
    if (object != nullptr) {
      auto it = object->fields().find(part);
      if (it == object->fields().end()) return nullptr;
      value = &it->second;
    } else if (value != nullptr && value->has_list_value()) {
      const int index = std::atoi(part.c_str());
      if (index < 0 || index >= value->list_value().values_size())
        return nullptr;
      value = &value->list_value().values(index);
    } else {
      return nullptr;
    }
    object = value->has_struct_value() ? &value->struct_value() : nullptr;
  }
  return value;
}

// The number at `path`; NaN, with a test failure, where there is none.
inline double JsonNumberAt(const google::protobuf::Struct& root,
                           std::string_view path) {
  const google::protobuf::Value* v = JsonAt(root, path);
  if (v == nullptr || !v->has_number_value()) {
    ADD_FAILURE() << "no number at " << path;
    return std::nan("");
  }
  return v->number_value();
}

}  // namespace moesim::testing

#endif  // MOESIM_TESTS_TOOLS_JSON_VALUE_H_
