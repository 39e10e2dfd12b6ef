// models::Dispatchers: the MoE token dispatchers moesim replays, one row
// each with the traits the rest of the code reads (the scenario word, the
// calibration rows that price its exchange, the SMs it holds, its permute
// and staging kernels, its communication buffer). A new dispatcher is a
// row here, an enumerator in training.h and its host calls in
// sim/host_calls.cc (DispatchHostCalls).
#ifndef MOESIM_MODELS_DISPATCHERS_H_
#define MOESIM_MODELS_DISPATCHERS_H_

#include <span>
#include <string_view>

#include "models/training.h"

namespace moesim::models {

struct DispatcherTraits {
  Dispatcher id = Dispatcher::kAllToAll;
  // The scenario's `dispatcher` word.
  std::string_view word;
  // Fused dispatch kernels (DeepEP, HybridEP: Megatron's flex dispatcher):
  // the exchange is priced from calibration/tables/<gpu>/dispatch.csv rows
  // named `table_rows`, the dispatcher keeps its own communication buffer
  // (models/memory.cc), and it needs an MoE model with EP > 1. Otherwise
  // the exchange is NCCL all-to-all with Megatron's permute and chunk sort
  // around it (MoEAlltoAllTokenDispatcher).
  bool fused = false;
  std::string_view table_rows;
  // SMs its kernels hold while they run: Megatron's --moe-deepep-num-sms
  // (20) and --moe-hybridep-num-sms (16) defaults; 0 for NCCL all-to-all
  // (not modelled).
  int sms_held = 0;
  // HybridEP: its dispatch permute copies the receive buffer's rows in the
  // dispatched dtype (FP8 where Megatron dispatches FP8), and across NVLink
  // domains the dispatch stages the tokens with a cudaMemcpyAsync first
  // (DeepEP hybrid-ep executor.cu). DeepEP's permute is Megatron's, on
  // 16-bit rows.
  bool permute_in_dispatched_dtype = false;
  bool stages_across_domains = false;
};

// Every dispatcher, in the order the scenario words are listed.
std::span<const DispatcherTraits> Dispatchers();

// The row of `d`.
const DispatcherTraits& TraitsOf(Dispatcher d);

}  // namespace moesim::models

#endif  // MOESIM_MODELS_DISPATCHERS_H_
