package ir

import "net/http"

// KindForStatus is the neutral class of an HTTP status, for errors whose body says nothing more.
func KindForStatus(status int) ErrorKind {
	switch {
	case status == http.StatusUnauthorized:
		return ErrAuthentication
	case status == http.StatusPaymentRequired:
		return ErrBilling
	case status == http.StatusForbidden:
		return ErrPermission
	case status == http.StatusNotFound:
		return ErrNotFound
	case status == http.StatusRequestTimeout, status == http.StatusGatewayTimeout:
		return ErrTimeout
	case status == http.StatusRequestEntityTooLarge:
		return ErrTooLarge
	case status == http.StatusTooManyRequests:
		return ErrRateLimit
	case status == http.StatusServiceUnavailable, status == 529:
		return ErrOverloaded
	case status >= 500 || status == 0:
		return ErrServer
	}
	return ErrInvalidRequest
}
