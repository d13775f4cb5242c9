// Pipeline encoders land here (see docs/architecture.md).
import PushlineCore
