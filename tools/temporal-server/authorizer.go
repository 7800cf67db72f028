package main

import (
	"context"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/server/common/api"
	"go.temporal.io/server/common/authorization"
)

// taskAPIs are the calls that take a workflow's, activity's or query's task, or answer one: what a worker does. The
// answer to a task is what a workflow acts on, so only the holder of a worker's token may give it.
var taskAPIs = map[string]bool{
	"PollWorkflowTaskQueue":            true,
	"PollActivityTaskQueue":            true,
	"PollNexusTaskQueue":               true,
	"RespondWorkflowTaskCompleted":     true,
	"RespondWorkflowTaskFailed":        true,
	"RespondQueryTaskCompleted":        true,
	"RespondActivityTaskCompleted":     true,
	"RespondActivityTaskCompletedById": true,
	"RespondActivityTaskFailed":        true,
	"RespondActivityTaskFailedById":    true,
	"RespondActivityTaskCanceled":      true,
	"RespondActivityTaskCanceledById":  true,
	"RecordActivityTaskHeartbeat":      true,
	"RecordActivityTaskHeartbeatById":  true,
	"RespondNexusTaskCompleted":        true,
	"RespondNexusTaskFailed":           true,
	"ResetStickyTaskQueue":             true,
	"ShutdownWorker":                   true,
	"RecordWorkerHeartbeat":            true,
}

// adminAPIs end, rewind or erase workflows (one or many at once): the project never calls them, so they are left to
// the namespace's admins, an operator in an emergency (docs/operating.md), and no `write` token suffices.
var adminAPIs = map[string]bool{
	"ResetWorkflowExecution":     true,
	"TerminateWorkflowExecution": true,
	"DeleteWorkflowExecution":    true,
	"StartBatchOperation":        true,
	"ResetActivity":              true,
}

// workerAuthorizer is Temporal's default authorizer with the worker role made its own: a task API needs the
// namespace's `worker` role (a `write` token no longer takes or answers tasks), an admin API the `admin` role, and
// everything else is the default rule, so a token with `worker` and `read` only cannot start, signal or update.
type workerAuthorizer struct {
	base authorization.Authorizer
}

func newWorkerAuthorizer() authorization.Authorizer {
	return &workerAuthorizer{base: authorization.NewDefaultAuthorizer()}
}

func (a *workerAuthorizer) Authorize(
	ctx context.Context,
	claims *authorization.Claims,
	target *authorization.CallTarget,
) (authorization.Result, error) {
	method, isWorkflowService := strings.CutPrefix(target.APIName, api.WorkflowServicePrefix)
	if claims == nil || !isWorkflowService || claims.System&authorization.RoleAdmin != 0 {
		return a.base.Authorize(ctx, claims, target)
	}
	roles := claims.System | claims.Namespaces[target.Namespace]
	switch {
	case taskAPIs[method]:
		return decide(claims, roles&authorization.RoleWorker != 0, "taking and answering tasks needs the worker role")
	case adminAPIs[method]:
		return decide(claims, roles&authorization.RoleAdmin != 0, "resetting, terminating or deleting needs the admin role")
	default:
		return a.base.Authorize(ctx, claims, target)
	}
}

func decide(claims *authorization.Claims, allowed bool, reason string) (authorization.Result, error) {
	if !allowed {
		return authorization.Result{Decision: authorization.DecisionDeny, Reason: reason}, nil
	}
	return authorization.Result{
		Decision:  authorization.DecisionAllow,
		Principal: &commonpb.Principal{Type: claims.AuthType, Name: claims.Subject},
	}, nil
}
