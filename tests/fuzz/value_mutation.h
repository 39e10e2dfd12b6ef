// Value-mutating fuzzing (issue 44): instead of mutating a file's text,
// whose numbers a byte-level fuzzer rarely turns into 0, -1, 1e-300, 1e300,
// NaN or INT64_MAX, each input is read as a list of (field, value) edits
// applied by reflection to a real shipped message, which is then printed
// as text and loaded through the real loader.
//
// Input: repeated 3-byte records [field hi][field lo][value kind], an
// 8-byte payload after kinds that take one. The field index picks, modulo
// their count, one numeric field among the message's scalar fields and
// those of its singular sub-messages (set or not); a repeated numeric field
// gets the value appended.
#ifndef MOESIM_TESTS_FUZZ_VALUE_MUTATION_H_
#define MOESIM_TESTS_FUZZ_VALUE_MUTATION_H_

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace moesim::fuzz {

struct NumericField {
  std::vector<const google::protobuf::FieldDescriptor*> path;  // to the leaf
};

inline void CollectNumericFields(
    const google::protobuf::Descriptor* d,
    std::vector<const google::protobuf::FieldDescriptor*>& prefix,
    std::vector<NumericField>& out, int depth) {
  using google::protobuf::FieldDescriptor;
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    prefix.push_back(f);
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (!f->is_repeated() && depth < 3)
        CollectNumericFields(f->message_type(), prefix, out, depth + 1);
    } else if (f->cpp_type() != FieldDescriptor::CPPTYPE_STRING &&
               f->cpp_type() != FieldDescriptor::CPPTYPE_BOOL &&
               f->cpp_type() != FieldDescriptor::CPPTYPE_ENUM) {
      out.push_back({prefix});
    }
    prefix.pop_back();
  }
}

// The value of one edit, as a double and as an int64 (the integer fields
// take the int64, saturated to int32 where the field is one).
struct EditValue {
  double real = 0;
  int64_t integer = 0;
};

inline EditValue ReadValue(uint8_t kind, const uint8_t*& data, size_t& size) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  switch (kind % 12) {
    case 0:
      return {0, 0};
    case 1:
      return {-1, -1};
    case 2:
      return {1e-300, 0};
    case 3:
      return {1e300, std::numeric_limits<int64_t>::max()};
    case 4:
      return {std::nan(""), std::numeric_limits<int64_t>::min()};
    case 5:
      return {kInf, std::numeric_limits<int32_t>::max()};
    case 6:
      return {-kInf, std::numeric_limits<int32_t>::min()};
    case 7:
      return {2147483648.0, int64_t{1} << 31};
    case 8:
      return {1, 1};
    case 9:
      return {0.5, 2};
    default: {  // 10, 11: the next 8 bytes, raw
      uint64_t bits = 0;
      const size_t n = size < 8 ? size : 8;
      std::memcpy(&bits, data, n);
      data += n;
      size -= n;
      double real;
      std::memcpy(&real, &bits, sizeof real);
      return {real, static_cast<int64_t>(bits)};
    }
  }
}

inline void SetValue(google::protobuf::Message& leaf_parent,
                     const google::protobuf::FieldDescriptor* f,
                     const EditValue& v) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection* r = leaf_parent.GetReflection();
  const auto i32 = static_cast<int32_t>(std::max<int64_t>(
      std::numeric_limits<int32_t>::min(),
      std::min<int64_t>(std::numeric_limits<int32_t>::max(), v.integer)));
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      rep ? r->AddInt32(&leaf_parent, f, i32)
          : r->SetInt32(&leaf_parent, f, i32);
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      rep ? r->AddInt64(&leaf_parent, f, v.integer)
          : r->SetInt64(&leaf_parent, f, v.integer);
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      rep ? r->AddUInt32(&leaf_parent, f, static_cast<uint32_t>(i32))
          : r->SetUInt32(&leaf_parent, f, static_cast<uint32_t>(i32));
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      rep ? r->AddUInt64(&leaf_parent, f, static_cast<uint64_t>(v.integer))
          : r->SetUInt64(&leaf_parent, f, static_cast<uint64_t>(v.integer));
      break;
    case FieldDescriptor::CPPTYPE_FLOAT:
      rep ? r->AddFloat(&leaf_parent, f, static_cast<float>(v.real))
          : r->SetFloat(&leaf_parent, f, static_cast<float>(v.real));
      break;
    case FieldDescriptor::CPPTYPE_DOUBLE:
      rep ? r->AddDouble(&leaf_parent, f, v.real)
          : r->SetDouble(&leaf_parent, f, v.real);
      break;
    default:
      break;
  }
}

// Applies the edits of `data` to `message`; at most 8 edits.
inline void MutateValues(const uint8_t* data, size_t size,
                         google::protobuf::Message& message) {
  std::vector<const google::protobuf::FieldDescriptor*> prefix;
  std::vector<NumericField> fields;
  CollectNumericFields(message.GetDescriptor(), prefix, fields, 0);
  if (fields.empty()) return;
  for (int edits = 0; edits < 8 && size >= 3; ++edits) {
    const size_t pick = (size_t{data[0]} << 8 | data[1]) % fields.size();
    const uint8_t kind = data[2];
    data += 3;
    size -= 3;
    const EditValue value = ReadValue(kind, data, size);
    google::protobuf::Message* m = &message;
    const NumericField& field = fields[pick];
    for (size_t k = 0; k + 1 < field.path.size(); ++k)
      m = m->GetReflection()->MutableMessage(m, field.path[k]);
    SetValue(*m, field.path.back(), value);
  }
}

}  // namespace moesim::fuzz

#endif  // MOESIM_TESTS_FUZZ_VALUE_MUTATION_H_
