package x

import "github.com/agentcontract/tool/internal/plan"

var _ = plan.Nine
